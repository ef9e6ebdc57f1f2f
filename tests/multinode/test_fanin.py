"""Each node answers for its own ranks (issue 34): a job of armed stdlib-only ranks on four
namespace nodes (``fan.py``: each node's own ``rankdebug launch --arm``, one rendezvous),
asked from node 0 with ``--hosts`` the three others. Every answer has every rank exactly
once, the odd rank (on node 2) is found by ``stacks``, ``eval`` and ``diagnose``, and a
node's stacks answer holds its distinct stacks once (classes), not once per rank. The
timed run at 16 nodes x 64 ranks is ``benchmarks/fanin.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from cluster import ClusterUnavailable, Node, start_cluster
from fan import REPO, FanJob, env, fan_job

from rankdebug.protocol import fields
from rankdebug.protocol import jobs as jobs_answer

NODES, PER_NODE, ODD = 4, 16, 37  # rank 37: node 2


@pytest.fixture(scope="module")
def fan() -> Iterator[FanJob]:
    try:
        cluster = start_cluster(count=NODES)
    except ClusterUnavailable as exc:
        pytest.skip(f"no multi-node cluster on this machine: {exc}")
    try:
        with fan_job(cluster, NODES, PER_NODE, odd=ODD, port=29681, timeout=300) as job:
            yield job
    finally:
        cluster.close()


def _ok(got: subprocess.CompletedProcess[str]) -> str:
    assert got.returncode == 0, got.stdout[-2000:] + got.stderr[-2000:]
    return got.stdout


def _lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in text.splitlines() if x.strip()]


def test_jobs_joins_every_node_into_one_job(fan: FanJob) -> None:
    found = json.loads(_ok(fan.rankdebug("jobs", "--json", "--no-gpu", *fan.hosts())))
    assert fields.shape_problem(found, jobs_answer.SHAPES["Answer"], jobs_answer.SHAPES) is None
    [job] = [j for j in found["jobs"] if j["rendezvous"] == "node0:29681"]
    assert job["id"] == fan.job and job["run_id"] == "fan-29681"
    assert [r["rank"] for r in job["ranks"]] == list(range(fan.ranks))
    assert {r["rank"]: r["host"] for r in job["ranks"]} == {
        r: f"node{r // PER_NODE}" for r in range(fan.ranks)}
    assert [n["host"] for n in found["nodes"]] == [f"node{i}" for i in range(NODES)]


def test_stacks_merges_the_nodes_answers(fan: FanJob) -> None:
    report = json.loads(_ok(fan.rankdebug("stacks", fan.job, "--json", "--tree",
                                          *fan.hosts())))
    assert sorted(r["rank"] for r in report["ranks"]) == list(range(fan.ranks))
    assert all(r["error"] is None and r["via"] == "handler" for r in report["ranks"])
    assert {r["host"] for r in report["ranks"] if r["rank"] == ODD} == {"node2"}
    mains = [g for g in report["groups"] if g["main"]]
    assert [g["ranks"] for g in mains] == [
        [r for r in range(fan.ranks) if r != ODD], [ODD]]
    assert [g["odd"] for g in mains] == [False, True] and report["odd"] == [ODD]
    assert "load_batch" in mains[1]["summary"] and "wait_for_peers" in mains[0]["summary"]
    # The merged tree: every rank at the root, parting where rank 37 does.
    [root] = report["tree"]
    assert root["count"] == fan.ranks and root["ranks"] == list(range(fan.ranks))
    node = root
    while len(node["children"]) == 1:
        node = node["children"][0]
    assert sorted(c["count"] for c in node["children"]) == [1, fan.ranks - 1]
    odd = min(node["children"], key=lambda c: c["count"])
    while odd["children"]:  # down to its innermost frame
        assert odd["ranks"] == [ODD]
        [odd] = odd["children"]
    assert odd["ranks"] == [ODD] and odd["name"] == "load_batch"
    # Each rank's own threads, ids and all (the shape lists every rank).
    by_rank = {r["rank"]: r for r in report["ranks"]}
    assert len({r["pid"] for r in report["ranks"] if r["host"] == "node1"}) == PER_NODE
    assert all(t["os_thread_id"] for r in by_rank.values() for t in r["threads"])


def test_stacks_of_some_ranks_asks_only_the_hosts_that_have_them(fan: FanJob) -> None:
    """``--ranks``: the jobs first, then only nodes 1 and 2 (ranks 30-40), each for its own."""
    report = json.loads(_ok(fan.rankdebug("stacks", fan.job, "--json", "--ranks", "30-40",
                                          *fan.hosts())))
    assert sorted(r["rank"] for r in report["ranks"]) == list(range(30, 41))
    assert {r["host"] for r in report["ranks"]} == {"node1", "node2"}
    assert report["odd"] == [ODD]


def test_a_node_answers_with_classes_not_ranks(fan: FanJob) -> None:
    """A node's ``stacks --node-answer``: its 16 ranks as a row each, their stacks once."""
    node = fan.cluster[2]
    jobs = json.loads(_ok(node.run([sys.executable, "-m", "rankdebug", "jobs", "--json",
                                    "--no-gpu"], cwd=REPO, env=env())))
    there = next(j["id"] for j in jobs["jobs"] if j["rendezvous"] == "node0:29681")
    answer = json.loads(_ok(node.run([sys.executable, "-m", "rankdebug", "stacks", there,
                                      "--json", "--node-answer", "--samples", "1"],
                                     cwd=REPO, env=env())))
    assert answer["fanin"] == 1 and answer["errors"] == []
    assert sorted(row[0] for row in answer["ranks"]) == list(range(32, 48))
    assert len(answer["classes"]) == 2  # the 15 alike, and rank 37
    odd_class = next(row[2] for row in answer["ranks"] if row[0] == ODD)
    assert sum(row[2] == odd_class for row in answer["ranks"]) == 1


def test_eval_reads_every_node_and_groups_the_values(fan: FanJob) -> None:
    lines = _lines(_ok(fan.rankdebug("eval", fan.job, "all", "weight_sum", "--json",
                                     *fan.hosts())))
    results, compare = lines[:-1], lines[-1]
    assert [x["rank"] for x in results] == list(range(fan.ranks))
    assert all(x["event"] == "result" and x["job"] == fan.job and x["pid"] for x in results)
    assert {x["text"] for x in results if x["rank"] != ODD} == {"1.0"}
    assert [x["text"] for x in results if x["rank"] == ODD] == ["1.5"]
    assert compare["event"] == "compare"
    assert [(g["ranks"], g["text"]) for g in compare["groups"]] == [
        ([r for r in range(fan.ranks) if r != ODD], "1.0"), ([ODD], "1.5")]
    # Some ranks only: each host is asked for its own.
    some = _lines(_ok(fan.rankdebug("eval", fan.job, "15-17,37", "weight_sum", "--json",
                                    *fan.hosts())))
    assert [x["rank"] for x in some[:-1]] == [15, 16, 17, 37]


def _agents(node: Node) -> list[int]:
    """The pids of the agents running on ``node``."""
    got = node.run(["pgrep", "-f", "rankdebug.jobs.nodes.node_agent"])
    return [int(x) for x in got.stdout.split()]


def test_an_agent_that_ended_is_started_again(fan: FanJob) -> None:
    _ok(fan.rankdebug("jobs", "--json", "--no-gpu", *fan.hosts()))
    node3 = fan.cluster[3]
    ended = _agents(node3)  # started by the verbs above (one per rankdebug version)
    assert ended
    node3.run(["kill", *map(str, ended)])
    lines = _lines(_ok(fan.rankdebug("eval", fan.job, "all", "weight_sum", "--json",
                                     *fan.hosts())))
    assert [x["rank"] for x in lines[:-1]] == list(range(fan.ranks))
    assert [g["ranks"] for g in lines[-1]["groups"]][1:] == [[ODD]]
    assert set(_agents(node3)) - set(ended)  # a new one answered


def test_diagnose_reads_every_node(fan: FanJob) -> None:
    lines = _lines(_ok(fan.rankdebug("diagnose", fan.job, "--json", *fan.hosts(),
                                     timeout=240)))
    ranks = [x for x in lines if x["event"] == "rank"]
    assert sorted(x["rank"] for x in ranks) == list(range(fan.ranks))
    classes = [x for x in lines if x["event"] == "class"]
    assert sorted(len(c["ranks"]) for c in classes) == [1, fan.ranks - 1]
    [odd] = [c for c in classes if c["ranks"] == [ODD]]
    assert odd["where"]["function"] == "load_batch"
    assert lines[-1]["event"] == "done" and lines[-1]["ranks_read"] == fan.ranks
    assert lines[-1]["ranks_unread"] == []


def test_without_agents_the_answer_is_the_same(fan: FanJob) -> None:
    """``RANKDEBUG_NO_AGENT=1``: each host runs ``rankdebug stacks`` over SSH instead."""
    report = json.loads(_ok(fan.rankdebug("stacks", fan.job, "--json", *fan.hosts(),
                                          extra={"RANKDEBUG_NO_AGENT": "1"})))
    assert sorted(r["rank"] for r in report["ranks"]) == list(range(fan.ranks))
    assert report["odd"] == [ODD]

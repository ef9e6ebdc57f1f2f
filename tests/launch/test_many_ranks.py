"""Many armed ranks for real (``rankdebug launch --arm`` of a launcher that starts 40
lightweight ranks, 4 to a node; ``many_ranks.py``, as ``benchmarks/scale.py`` runs it with
256): one registry job with every rank's socket; ``stacks`` asks every handler at once and
singles out the rank waiting elsewhere over 3 reads, and stops after one read when no rank
is apart; ``eval`` asks every rank at once (more ranks than the 32 threads it used to have)
and groups the answers; the job ends leaving nothing behind.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from launch_helpers import SCRIPTS, Launch, job_processes, wait_for

import wire_check
from rankdebug.runtime import registry

pytestmark = pytest.mark.timeout(240)

NPROC = 40
PER_NODE = 4
ODD = 13


def rankdebug(*args: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "rankdebug", *args], capture_output=True,
                          text=True, timeout=timeout, check=False, cwd=SCRIPTS)
    return wire_check.checked(args, done)  # --json lines as declared


def lines(out: subprocess.CompletedProcess[str]) -> list[Any]:
    assert out.stdout.strip(), out.stderr
    return [json.loads(line) for line in out.stdout.strip().splitlines()]


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Launch, str]]:
    tmp = tmp_path_factory.mktemp("many")
    # An executable of its own: plans as launcher "other", so the launcher process is not
    # taken for rank 0 (as `python many_ranks.py` would be).
    launcher = tmp / "many-ranks"
    launcher.write_text(f"#!/bin/sh\nexec {sys.executable} {SCRIPTS / 'many_ranks.py'} "
                        'launch "$@"\n')
    launcher.chmod(0o700)
    launch = Launch(["--arm", "--", str(launcher), "--nproc", str(NPROC), "--per-node",
                     str(PER_NODE), "--odd", str(ODD)], tmp)
    job_id = str(launch.event("job")["job"])

    def armed() -> Any:
        found = lines(rankdebug("jobs", job_id, "--json", "--no-gpu"))[-1]["jobs"][0]
        ready = [r for r in found["ranks"] if r["socket"] and r["pid"]]
        return found if len(ready) == NPROC else None

    try:
        wait_for(f"{NPROC} armed ranks", armed, timeout=120)
        yield launch, job_id
    finally:
        launch.signal()
        try:
            launch.wait(60)
        finally:
            launch.close()


def test_every_rank_is_listed_once_with_its_socket(job: tuple[Launch, str]) -> None:
    _, job_id = job
    found = lines(rankdebug("jobs", "--json", "--no-gpu"))[-1]
    mine = [j for j in found["jobs"] if j["id"] == job_id]
    assert len(mine) == 1 and mine[0]["armed"] and mine[0]["source"] == "registry"
    ranks = mine[0]["ranks"]
    assert [r["rank"] for r in ranks] == list(range(NPROC))
    assert [r["local_rank"] for r in ranks] == [r % PER_NODE for r in range(NPROC)]
    assert {r["world_size"] for r in ranks} == {NPROC}
    assert all(r["armed"] and r["socket"].endswith(f"rank-{r['rank']}.sock") for r in ranks)
    assert len({r["pid"] for r in ranks}) == NPROC


def test_stacks_read_every_handler_and_single_out_the_odd_rank(job: tuple[Launch, str]) -> None:
    _, job_id = job
    out = rankdebug("stacks", job_id, "--json")
    assert out.returncode == 0, out.stderr
    report = lines(out)[-1]
    assert [r["via"] for r in report["ranks"]] == ["handler"] * NPROC
    assert report["odd"] == [ODD] and report["samples"] == 3
    mains = [g for g in report["groups"] if g["main"]]
    assert [len(g["ranks"]) for g in mains] == [NPROC - 1, 1]
    assert mains[1]["ranks"] == [ODD] and mains[1]["odd"]
    assert "load_batch" in mains[1]["summary"]
    # The merged tree: one trunk, two branches (NPROC - 1 ranks in train_step, one elsewhere).
    (root,) = report["tree"]
    assert root["count"] == NPROC
    branches = sorted((c["count"], c["ranks"]) for c in root["children"])
    assert [n for n, _ in branches] == [1, NPROC - 1] and branches[0][1] == [ODD]
    # Three reads 0.25 s apart (start to start): half a second of waiting, then the last read.
    assert 0.5 <= report["seconds"] < 5


def test_one_read_is_enough_when_no_rank_is_apart(job: tuple[Launch, str]) -> None:
    _, job_id = job
    pids = [r["pid"] for r in lines(rankdebug("jobs", job_id, "--json", "--no-gpu"))[-1]
            ["jobs"][0]["ranks"] if r["rank"] != ODD][:12]
    out = rankdebug("stacks", *[f"--pid={p}" for p in pids], "--json")
    assert out.returncode == 0, out.stderr
    report = lines(out)[-1]
    assert report["samples"] == 1 and report["odd"] == []
    assert [len(g["ranks"]) for g in report["groups"] if g["main"]] == [12]
    # --samples 1 asks for one read; --samples 3 with an odd rank takes all three (above).
    assert lines(rankdebug("stacks", f"--pid={pids[0]}", "--json", "--samples", "1")
                 )[-1]["samples"] == 1


def test_eval_asks_every_rank_at_once_and_groups_the_answers(job: tuple[Launch, str]) -> None:
    _, job_id = job
    out = rankdebug("eval", job_id, "all", "weight_sum", "--json")
    assert out.returncode == 0, out.stderr
    got = lines(out)
    results = [line for line in got if line["event"] == "result"]
    assert [r["rank"] for r in results] == list(range(NPROC))
    assert got[-1]["event"] == "compare"
    groups = [(g["ranks"], g["text"]) for g in got[-1]["groups"]]
    assert groups == [([r for r in range(NPROC) if r != ODD], "1.0"), ([ODD], "1.5")]
    # Every rank says when it began, then takes a second: all began at once (32 at a time,
    # the last 8 would have begun a second later).
    out = rankdebug("eval", job_id, "all",
                    "began = __import__('time').time()\n__import__('time').sleep(1)\nbegan",
                    "--json", "--timeout", "20")
    assert out.returncode == 0, out.stderr
    began = [float(line["text"]) for line in lines(out) if line["event"] == "result"]
    assert len(began) == NPROC and max(began) - min(began) < 0.9, began


def test_the_job_ends_and_leaves_nothing(job: tuple[Launch, str]) -> None:
    launch, job_id = job
    launch.signal()
    launch.wait(60)
    wait_for("no process of the job", lambda: not job_processes(job_id), timeout=30)
    wait_for("no registry folder", lambda: not Path(registry.job_dir(job_id)).exists(),
             timeout=30)

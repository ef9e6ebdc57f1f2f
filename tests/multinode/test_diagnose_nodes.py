"""``rankdebug diagnose --hosts``: a two-node torchrun job (c10d, 2 ranks a node) started by
hand on each node, hung by its last rank (``tests/jobs/scripts/hang_job.py``, SCENARIO=skip,
on node 1), diagnosed from node 0: node 1's ranks are read by a diagnosis run there over
SSH, and the finding names rank 3 at its line. Without ``--hosts`` the ranks of node 1 are
unread, and what the others wait for is said as that, never guessed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from cluster import Cluster

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
SCRIPT = REPO / "tests" / "jobs" / "scripts" / "hang_job.py"
BARRIER = next(i for i, text in enumerate(SCRIPT.read_text().splitlines(), start=1)
               if "# BARRIER" in text)


def _env(marker: Path) -> dict[str, str]:
    import os

    return {**os.environ, "GLOO_SOCKET_IFNAME": "eth0", "OMP_NUM_THREADS": "1",
            "PYTHONPATH": str(REPO / "pyserver"), "SCENARIO": "skip",
            "MARKER_DIR": str(marker)}


def _diagnose(nodes: Cluster, job: str, *extra: str) -> list[dict[str, Any]]:
    got = nodes[0].run([sys.executable, "-m", "rankdebug", "diagnose", job, "--json", *extra],
                       cwd=REPO, env=_env(Path("/var/tmp")), timeout=180)
    assert got.returncode == 0, got.stdout[-2000:] + got.stderr[-2000:]
    return [json.loads(line) for line in got.stdout.splitlines() if line.strip()]


def test_diagnose_reads_the_ranks_of_both_nodes(nodes: Cluster) -> None:
    marker = Path(tempfile.mkdtemp(prefix="rd-diag-", dir="/var/tmp"))  # shared by the nodes
    env = _env(marker)
    argv = [sys.executable, "-m", "torch.distributed.run", "--nnodes", "2",
            "--nproc_per_node", "2", "--rdzv_backend", "c10d", "--rdzv_endpoint",
            "node0:29671", "--rdzv_id", "diag", str(SCRIPT)]
    remote = " ".join(["cd", str(REPO), "&&", "exec", "env", "GLOO_SOCKET_IFNAME=eth0",
                       "OMP_NUM_THREADS=1", "SCENARIO=skip", f"MARKER_DIR={marker}",
                       f"PYTHONPATH={REPO / 'pyserver'}", *argv])
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    first = nodes[0].popen(argv, cwd=REPO, env=env, **quiet)
    second = nodes[0].popen([*nodes.ssh_argv("node1"), remote], cwd=REPO, **quiet)
    hosts = ["--hosts", "node1", "--ssh-config", str(nodes.ssh_config)]
    try:
        deadline = time.monotonic() + 150
        while len(list(marker.glob("at-*"))) < 4:
            assert time.monotonic() < deadline, "the job's ranks never got there"
            time.sleep(0.5)
        time.sleep(3.0)  # into the calls they stay in
        got = nodes[0].run([sys.executable, "-m", "rankdebug", "jobs", "--json", "--no-gpu",
                            *hosts], cwd=REPO, env=env, timeout=120)
        job = next(j for j in json.loads(got.stdout)["jobs"] if j["run_id"] == "diag")
        where = {r["rank"]: r["host"] for r in job["ranks"]}
        assert where == {0: "node0", 1: "node0", 2: "node1", 3: "node1"}

        lines = _diagnose(nodes, job["id"], *hosts)
        ranks = {ln["rank"]: ln for ln in lines if ln["event"] == "rank"}
        assert {r: ranks[r]["host"] for r in ranks} == where
        assert {r: ranks[r]["via"] for r in ranks} == dict.fromkeys(where, "py-spy")
        classes = {tuple(ln["ranks"]): ln for ln in lines if ln["event"] == "class"}
        assert (0, 1, 2) in classes, [ln for ln in lines if ln["event"] != "rank"]
        assert classes[(0, 1, 2)]["state"] == "waiting"
        assert classes[(0, 1, 2)]["collective"]["op"] == "all_reduce"
        assert classes[(3,)]["collective"]["op"] == "barrier"
        [found] = [ln for ln in lines if ln["event"] == "culprit"]
        assert found["ranks"] == [3]
        assert (found["where"]["function"], found["where"]["line"]) == ("skip", BARRIER)
        assert lines[-1]["event"] == "done" and lines[-1]["ranks_read"] == 4

        # Without --hosts: node 1's ranks are unread, and said to be what ranks 0-1 wait for.
        lines = _diagnose(nodes, job["id"])
        [found] = [ln for ln in lines if ln["event"] == "culprit"]
        assert found["ranks"] == [2, 3] and "could not be read" in found["why"]
        assert "not found on this host" in found["why"] and found["where"] is None
        unread = lines[-1]["ranks_unread"]
        assert [u["rank"] for u in unread] == [2, 3] and lines[-1]["ranks_read"] == 2
    finally:
        for proc in (first, second):
            nodes[0].stop(proc)
        shutil.rmtree(marker, ignore_errors=True)

"""A many-node job of lightweight armed ranks on a namespace cluster (cluster.py), for the
fan-in test and ``benchmarks/fanin.py``.

Each node runs its own ``rankdebug launch --arm -- node-ranks --node I …``
(``scripts/node_ranks.py``: ``--per-node`` stdlib-only ranks of ``many_ranks.py``, rank
``--odd`` the odd one out): every node's ranks are armed by that node's supervisor, and all
share one rendezvous, so ``rankdebug jobs --hosts node1,…`` on node 0 lists one job of
``nodes × per_node`` ranks, as for a torchrun job started on every node.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cluster import Cluster

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SCRIPT = HERE / "scripts" / "node_ranks.py"


def env(pythonpath: str | None = None) -> dict[str, str]:
    """``pythonpath``: where rankdebug is imported from (default: this checkout's)."""
    return {**os.environ, "PYTHONPATH": pythonpath or str(REPO / "pyserver"),
            "OMP_NUM_THREADS": "1"}


@dataclass
class FanJob:
    cluster: Cluster
    nodes: int
    per_node: int
    odd: int
    job: str = ""  # the job's id on node 0
    pythonpath: str | None = None  # rankdebug's, where not this checkout's
    procs: list[subprocess.Popen[Any]] = field(default_factory=list)

    @property
    def ranks(self) -> int:
        return self.nodes * self.per_node

    def hosts(self) -> list[str]:
        """``--hosts node1,…`` and the cluster's ssh configuration."""
        names = ",".join(n.name for n in self.cluster.nodes[1:self.nodes])
        return ["--hosts", names, "--ssh-config", str(self.cluster.ssh_config)]

    def rankdebug(self, *argv: str, timeout: float = 120,
                  extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """``rankdebug ARGV…`` on node 0 (``extra``: variables added to its environment)."""
        return self.cluster[0].run([sys.executable, "-m", "rankdebug", *argv], cwd=REPO,
                                   env={**env(self.pythonpath), **(extra or {})},
                                   timeout=timeout)


def _armed(fan: FanJob, index: int) -> str | None:
    """The id of node ``index``'s job once its ranks all serve their handler."""
    got = fan.cluster[index].run([sys.executable, "-m", "rankdebug", "jobs", "--json",
                                  "--no-gpu"], cwd=REPO, env=env(fan.pythonpath), timeout=60)
    with contextlib.suppress(ValueError):
        for job in json.loads(got.stdout).get("jobs") or []:
            ready = [r for r in job["ranks"] if r.get("socket") and r.get("pid")]
            if job.get("armed") and len(ready) >= fan.per_node:
                return str(job["id"])
    return None


@contextlib.contextmanager
def fan_job(cluster: Cluster, nodes: int, per_node: int, odd: int = 137,
            port: int = 29777, timeout: float = 600, pythonpath: str | None = None
            ) -> Iterator[FanJob]:
    """The job running and armed on the first ``nodes`` nodes; ended (with every process of
    those nodes) afterwards. ``pythonpath``: rankdebug's (a copy that no edit changes while
    a benchmark runs)."""
    fan = FanJob(cluster, nodes, per_node, odd, pythonpath=pythonpath)
    tmp = Path(tempfile.mkdtemp(prefix="rd-fan-", dir="/var/tmp"))  # seen by every node
    launcher = tmp / "node-ranks"  # plans as launcher "other": not itself a rank
    launcher.write_text(f"#!/bin/sh\nexec {sys.executable} {SCRIPT} \"$@\"\n")
    launcher.chmod(0o700)
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    try:
        for i in range(nodes):
            fan.procs.append(cluster[i].popen(
                [sys.executable, "-m", "rankdebug", "launch", "--arm", "--json", "--",
                 str(launcher), "--node", str(i), "--nodes", str(nodes), "--per-node",
                 str(per_node), "--odd", str(odd), "--master-port", str(port)],
                cwd=REPO, env=env(pythonpath), **quiet))
        deadline = time.monotonic() + timeout
        waiting = list(range(nodes))
        while waiting:
            if time.monotonic() > deadline:
                raise RuntimeError(f"nodes {waiting} not armed after {timeout:.0f} s")
            time.sleep(2.0)
            for i in list(waiting):
                job = _armed(fan, i)
                if job is not None:
                    waiting.remove(i)
                    if i == 0:
                        fan.job = job
        yield fan
    finally:
        for proc in fan.procs:
            cluster[0].stop(proc)
        for node in cluster.nodes[:nodes]:
            node.kill_processes()
        subprocess.run(["rm", "-rf", str(tmp)], check=False)

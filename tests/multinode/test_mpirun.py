"""Open MPI's mpirun across the cluster: run on node 0, it starts node 1's ranks over ssh."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cluster import Cluster

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
LINE = re.compile(r"^rank (\d+) world (\d+) sum (\d+) step (\d+) host (\S+) master (\S+)$", re.M)

pytestmark = pytest.mark.skipif(shutil.which("mpirun") is None, reason="mpirun not installed")


def mpirun_argv(cluster: Cluster, *, ranks_per_node: int = 2) -> list[str]:
    """mpirun over the cluster's ssh: its orted on node 1 is started with ``ssh -F CONFIG
    node1``, and Open MPI's own traffic (oob, btl) is kept on the veth."""
    hosts = ",".join(f"{node.name}:{ranks_per_node}" for node in cluster.nodes)
    return [
        "mpirun", "-np", str(ranks_per_node * len(cluster.nodes)), "-H", hosts,
        "--mca", "plm_rsh_agent", f"ssh -F {cluster.ssh_config}",
        "--mca", "btl_tcp_if_include", cluster.interface,
        "--mca", "oob_tcp_if_include", cluster.interface,
    ]  # fmt: skip


def check_two_node_run(done: subprocess.CompletedProcess[str]) -> None:
    """allreduce.py's output of a 2 x 2 run (3 steps): ranks 0-1 on node0, 2-3 on node1, a
    world of 4 summing to 10."""
    assert done.returncode == 0, done.stdout
    lines = LINE.findall(done.stdout)
    assert len(lines) == 4 * 3, done.stdout
    hosts = {int(rank): host for rank, world, total, *_, host, _master in lines}
    assert hosts == {0: "node0", 1: "node0", 2: "node1", 3: "node1"}, done.stdout
    assert {(world, total) for _, world, total, *_ in lines} == {("4", "10")}, done.stdout


def _env() -> dict[str, str]:
    # Open MPI refuses root unless told twice (--allow-run-as-root works too, 4.x and 5.x).
    return {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def test_mpirun_starts_ranks_on_both_nodes(nodes: Cluster) -> None:
    show = 'echo "rank $OMPI_COMM_WORLD_RANK local $OMPI_COMM_WORLD_LOCAL_RANK host $(hostname)"'
    done = nodes[0].run(
        [*mpirun_argv(nodes), "sh", "-c", show],
        cwd=REPO,
        env=_env(),
        timeout=60,
        stderr=subprocess.STDOUT,
    )
    assert done.returncode == 0, done.stdout
    lines = sorted(line for line in done.stdout.splitlines() if line.startswith("rank "))
    assert lines == [
        "rank 0 local 0 host node0",
        "rank 1 local 1 host node0",
        "rank 2 local 0 host node1",
        "rank 3 local 1 host node1",
    ], done.stdout


def test_mpirun_gloo_job_across_nodes(nodes: Cluster) -> None:
    """torch.distributed from mpirun's environment: rank and size from OMPI_COMM_WORLD_*,
    the rendezvous (MASTER_ADDR, MASTER_PORT) and gloo's interface exported with -x."""
    exports = ["MASTER_ADDR=node0", "MASTER_PORT=29501", f"GLOO_SOCKET_IFNAME={nodes.interface}"]
    argv = [*mpirun_argv(nodes)]
    for export in exports:
        argv += ["-x", export]
    argv += [sys.executable, str(HERE / "scripts" / "allreduce.py")]
    done = nodes[0].run(argv, cwd=REPO, env=_env(), timeout=90, stderr=subprocess.STDOUT)
    check_two_node_run(done)

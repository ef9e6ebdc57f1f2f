"""A real two-node torchrun job across the cluster: c10d rendezvous, gloo, 2 nodes x 2 ranks.

Node 0's torchrun runs on node 0 (nsenter); node 1's is started over ssh from node 0, as a
user would on a real cluster. The settings are the ones cluster.py's docstring explains.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from cluster import Cluster

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
SCRIPT = HERE / "scripts" / "allreduce.py"
LINE = re.compile(r"^rank (\d+) world (\d+) sum (\d+) step (\d+) host (\S+) master (\S+)$", re.M)


def torchrun_argv(cluster: Cluster, port: int, run_id: str) -> list[str]:
    """The same torchrun command for every node (the rendezvous endpoint is node 0)."""
    return [
        sys.executable, "-m", "torch.distributed.run",
        "--nnodes", "2", "--nproc_per_node", "2",
        "--rdzv_backend", "c10d", "--rdzv_endpoint", f"{cluster[0].address}:{port}",
        "--rdzv_id", run_id,
        str(SCRIPT),
    ]  # fmt: skip


def test_torchrun_c10d_across_two_nodes(nodes: Cluster) -> None:
    node0, node1 = nodes.nodes
    argv = torchrun_argv(nodes, 29500, "t1")
    env = {"GLOO_SOCKET_IFNAME": nodes.interface, "ALLREDUCE_STEPS": "3"}
    remote = " ".join(
        ["cd", shlex.quote(str(REPO)), "&&", "exec", "env"]
        + [f"{key}={value}" for key, value in env.items()]
        + [shlex.join(argv)]
    )
    common = {"stdout": subprocess.PIPE, "stderr": subprocess.STDOUT, "text": True}
    first = node0.popen(argv, cwd=REPO, env={**os.environ, **env}, **common)
    second = node0.popen([*nodes.ssh_argv(node1), remote], cwd=REPO, **common)
    outputs: list[str] = []
    try:
        for proc in (first, second):
            out, _ = proc.communicate(timeout=90)
            outputs.append(out)
            assert proc.returncode == 0, out
    finally:
        for proc in (first, second):
            node0.stop(proc)
    ranks: dict[int, str] = {}
    for node, out in zip(nodes.nodes, outputs, strict=True):
        lines = LINE.findall(out)
        assert len(lines) == 2 * 3, out  # 2 ranks x 3 steps
        for rank, world, total, _step, host, master in lines:
            assert (world, total, host) == ("4", "10", node.name), out  # 1+2+3+4
            assert master in (node0.address, node1.address, "node0", "node1"), out
            ranks[int(rank)] = host
    assert sorted(ranks) == [0, 1, 2, 3]

"""Many nodes (issue 17): a chosen rank on another node against one on this node, side by side.

Two namespace nodes with real sshd (``tests/multinode/cluster.py``; root, Linux), a 2 x 2
torchrun c10d job (``tests/multinode/scripts/allreduce.py``) started by ``rankdebug launch
--hosts node1`` on node 0, a DAP client on node 0 (``tests/multinode/scripts/dap_driver.py``)
that sets a breakpoint on a line of the loop and waits for the chosen rank to stop there:

- time from launch to the chosen rank paused, the rank on node 1 (through SSH) ÷ a rank on
  node 0 (interleaved runs; which ranks c10d puts on which node is read from the events);
- the same through Open MPI's ``mpirun -H node0:2,node1:2`` (the launcher starts node 1's
  ranks itself; rankdebug only made node 1 ready): rank 3 (node 1) ÷ rank 1 (node 0);
- ``rankdebug jobs --json --hosts node1`` of a running 2-node job ÷ ``rankdebug jobs --json``
  (this node only), and their wall times.

    python benchmarks/multinode.py [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "multinode"))

from cluster import Cluster, start_cluster  # noqa: E402

SCRIPT = ROOT / "tests" / "multinode" / "scripts" / "allreduce.py"
DRIVER = ROOT / "tests" / "multinode" / "scripts" / "dap_driver.py"
LINE = next(i for i, t in enumerate(SCRIPT.read_text().splitlines(), 1) if "sys.stdout.write(" in t)


def _env() -> dict[str, str]:
    return {**os.environ, "GLOO_SOCKET_IFNAME": "eth0", "OMP_NUM_THREADS": "1",
            "PYTHONPATH": str(ROOT / "pyserver")}


def _torchrun(port: int) -> list[str]:
    return [sys.executable, "-m", "torch.distributed.run", "--nnodes", "2", "--nproc_per_node",
            "2", "--rdzv_backend", "c10d", "--rdzv_endpoint", f"node0:{port}", "--rdzv_id",
            f"b{port}", str(SCRIPT)]


def paused(cluster: Cluster, rank: int, port: int) -> tuple[float, str]:
    """Seconds from launch to ``rank`` paused, and the node it ran on."""
    args = ["--ranks", str(rank), "--hosts", "node1", "--ssh-config", str(cluster.ssh_config),
            "--", *_torchrun(port)]
    got = cluster[0].run([sys.executable, str(DRIVER), "continue", "1", str(SCRIPT), str(LINE),
                          "--", *args], cwd=ROOT, env=_env(), timeout=300)
    result = json.loads(got.stdout.strip().splitlines()[-1])
    if result.get("code") != 0:
        raise SystemExit(f"run failed: {got.stdout[-2000:]}{got.stderr[-2000:]}")
    event = next(e for e in result["events"] if e["event"] == "listening")
    return float(result["paused_s"]), str(event.get("node") or "node0")


def _mpirun(cluster: Cluster, port: int) -> list[str]:
    return ["mpirun", "-np", "4", "-H", "node0:2,node1:2", "--mca", "plm_rsh_agent",
            f"ssh -F {cluster.ssh_config}", "--mca", "btl_tcp_if_include", "eth0",
            "--mca", "oob_tcp_if_include", "eth0", "-x", f"MASTER_PORT={port}",
            "-x", "MASTER_ADDR=node0", "-x", "GLOO_SOCKET_IFNAME=eth0", sys.executable,
            str(SCRIPT)]


def paused_mpirun(cluster: Cluster, rank: int, port: int) -> float:
    """Seconds from ``rankdebug launch`` of an mpirun job to ``rank`` paused."""
    args = ["--ranks", str(rank), "--ssh-config", str(cluster.ssh_config), "--",
            *_mpirun(cluster, port)]
    env = {**_env(), "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    got = cluster[0].run([sys.executable, str(DRIVER), "continue", "1", str(SCRIPT), str(LINE),
                          "--", *args], cwd=ROOT, env=env, timeout=300)
    result = json.loads(got.stdout.strip().splitlines()[-1])
    if result.get("code") != 0:
        raise SystemExit(f"mpirun run failed: {got.stdout[-2000:]}{got.stderr[-2000:]}")
    return float(result["paused_s"])


def listing(cluster: Cluster, runs: int) -> tuple[float, float]:
    """Median wall seconds of ``jobs --json`` with and without ``--hosts node1``, while a
    2-node job runs."""
    env = {**_env(), "ALLREDUCE_STEPS": "100000"}
    argv = _torchrun(29790)
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    remote = " ".join(["cd", str(ROOT), "&&", "exec", "env", "GLOO_SOCKET_IFNAME=eth0",
                       "ALLREDUCE_STEPS=100000", *argv])
    procs = [cluster[0].popen(argv, cwd=ROOT, env=env, **quiet),
             cluster[0].popen([*cluster.ssh_argv("node1"), remote], cwd=ROOT, **quiet)]
    try:
        time.sleep(8)
        one, both = [], []
        for _ in range(runs):
            for hosts, into in (([], one), (["--hosts", "node1", "--ssh-config",
                                             str(cluster.ssh_config)], both)):
                t0 = time.monotonic()
                cluster[0].run([sys.executable, "-m", "rankdebug", "jobs", "--json", "--no-gpu",
                                *hosts], cwd=ROOT, env=_env())
                into.append(time.monotonic() - t0)
        return statistics.median(one), statistics.median(both)
    finally:
        for proc in procs:
            cluster[0].stop(proc)
        for node in cluster.nodes:
            node.kill_processes()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with start_cluster() as cluster:
        local: list[float] = []
        far: list[float] = []
        for i in range(args.runs):
            # Ranks 1 and 3: c10d puts one on each node (which one is read back).
            for rank in (1, 3):
                seconds, node = paused(cluster, rank, 29700 + 10 * i + rank)
                (far if node == "node1" else local).append(seconds)
        mpi_local: list[float] = []
        mpi_far: list[float] = []
        for i in range(args.runs):  # -H node0:2,node1:2: ranks 0,1 here, 2,3 on node 1
            for rank, into in ((1, mpi_local), (3, mpi_far)):
                into.append(paused_mpirun(cluster, rank, 29750 + 10 * i + rank))
        one, both = listing(cluster, args.runs)
    ratio = statistics.median(far) / statistics.median(local)
    print(f"launch -> rank paused, rank on node 1 (SSH): median {statistics.median(far):.2f} s "
          f"({', '.join(f'{x:.2f}' for x in far)})")
    print(f"launch -> rank paused, rank on node 0:       median {statistics.median(local):.2f} s "
          f"({', '.join(f'{x:.2f}' for x in local)})")
    print(f"ratio remote / local: {ratio:.2f}x (target <= 1.10)")
    mpi = statistics.median(mpi_far) / statistics.median(mpi_local)
    print(f"mpirun (it starts node 1's ranks): rank 3 on node 1 median "
          f"{statistics.median(mpi_far):.2f} s ({', '.join(f'{x:.2f}' for x in mpi_far)}), "
          f"rank 1 on node 0 {statistics.median(mpi_local):.2f} s "
          f"({', '.join(f'{x:.2f}' for x in mpi_local)}): {mpi:.2f}x (target <= 1.10)")
    print(f"rankdebug jobs --json: this node {one * 1000:.0f} ms, with --hosts node1 "
          f"{both * 1000:.0f} ms ({both / one:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

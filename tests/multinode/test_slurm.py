"""Slurm across the cluster: slurmctld on node 0, a slurmd per node, ``srun -N 2 -n 4``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from slurm import Slurm, unavailable_reason
from test_mpirun import check_two_node_run

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent

pytestmark = pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason()))



def test_srun_starts_tasks_on_both_nodes(slurm: Slurm) -> None:
    show = 'echo "task $SLURM_PROCID local $SLURM_LOCALID host $(hostname) node $SLURMD_NODENAME"'
    done = slurm.cluster[0].run(
        ["srun", "-N", "2", "-n", "4", "sh", "-c", show],
        cwd=REPO,
        env=slurm.env,
        timeout=60,
        stderr=subprocess.STDOUT,
    )
    assert done.returncode == 0, done.stdout
    assert sorted(done.stdout.splitlines()) == [
        "task 0 local 0 host node0 node node0",
        "task 1 local 1 host node0 node node0",
        "task 2 local 0 host node1 node node1",
        "task 3 local 1 host node1 node node1",
    ], done.stdout


def test_srun_gloo_job_across_nodes(slurm: Slurm) -> None:
    """torch.distributed from srun's environment (SLURM_PROCID, SLURM_NTASKS), the
    rendezvous address in the environment srun passes on."""
    env = {
        **slurm.env,
        "MASTER_ADDR": "node0",
        "MASTER_PORT": "29502",
        "GLOO_SOCKET_IFNAME": slurm.cluster.interface,
    }
    done = slurm.cluster[0].run(
        ["srun", "-N", "2", "-n", "4", sys.executable, str(HERE / "scripts" / "allreduce.py")],
        cwd=REPO,
        env=env,
        timeout=90,
        stderr=subprocess.STDOUT,
    )
    check_two_node_run(done)

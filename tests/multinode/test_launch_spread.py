"""``rankdebug launch --hosts`` with launchers that start every node's ranks themselves:
Open MPI's mpirun (orted over ssh) and Slurm's srun (slurmd on each node).

rankdebug launch runs on node 0 and runs the command there only; node 1's ranks are started
by the launcher with node 0's environment. The test checks that those ranks are debugged
from node 0 (paused at a breakpoint, ``RANK`` and the host right), and that a stop, or the
job's end, leaves nothing on either node.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from cluster import Cluster
from slurm import Slurm
from test_launch_nodes import DRIVER, LINE, REPO, SCRIPT, wait_clean
from test_mpirun import mpirun_argv

NO_MPIRUN = "mpirun not installed"


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "GLOO_SOCKET_IFNAME": "eth0", "OMP_NUM_THREADS": "1",
            "PYTHONPATH": str(REPO / "pyserver"), "MASTER_ADDR": "node0",
            "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", **extra}


def drive(cluster: Cluster, mode: str, ranks: str, command: list[str],
          env: dict[str, str], hosts: tuple[str, ...] = ("--hosts", "node1")
          ) -> dict[str, Any]:
    # Each chosen rank to its own breakpoint: stopping together, the first stop could pause
    # another before its line, which is not what these tests read.
    args = ["--ranks", ranks, "--stop", "alone", *hosts, "--ssh-config", str(cluster.ssh_config),
            "--", *command]
    got = cluster[0].run([sys.executable, str(DRIVER), mode, str(len(ranks.split(","))),
                          str(SCRIPT), str(LINE), "--", *args],
                         timeout=240, cwd=REPO, env=env)
    assert got.returncode == 0, got.stdout + got.stderr
    result: dict[str, Any] = json.loads(got.stdout.strip().splitlines()[-1])
    result["stderr"] = got.stderr
    return result


def check_paused(result: dict[str, Any], remote_ranks: set[int]) -> None:
    listening = {e["rank"]: e for e in result["events"] if e["event"] == "listening"}
    assert all(e["host"] == "127.0.0.1" for e in listening.values()), listening
    # The launcher started them there; each says its node, found from its host name.
    assert {r for r, e in listening.items() if e.get("node") == "node1"} == remote_ranks, \
        (listening, result["stderr"][-3000:])
    for rank, seen in result["stopped"].items():
        assert seen["line"] == LINE and seen["RANK"] == f"'{rank}'", result["stopped"]
        host = "'node1'" if int(rank) in remote_ranks else "'node0'"
        assert seen["host"] == host, result["stopped"]


@pytest.mark.skipif(subprocess.run(["sh", "-c", "command -v mpirun"], check=False,
                                   capture_output=True).returncode != 0, reason=NO_MPIRUN)
class TestMpirun:
    def command(self, cluster: Cluster, port: int) -> list[str]:
        # Nothing of rankdebug's in the command: the ranks there get its variables through
        # Open MPI's mca_base_env_list, which rankdebug sets.
        return [*mpirun_argv(cluster), "-x", f"MASTER_PORT={port}", "-x", "MASTER_ADDR",
                "-x", "GLOO_SOCKET_IFNAME", sys.executable, str(SCRIPT)]

    def test_ranks_on_both_nodes_pause_continue_and_leave_nothing(self, nodes: Cluster
                                                                  ) -> None:
        result = drive(nodes, "continue", "1,3", self.command(nodes, 29710), _env())
        check_paused(result, {3})
        assert result["code"] == 0, result["stderr"][-3000:]
        assert wait_clean(nodes) == []
        # The job's folder on node 1 (the path it has on node 0) is gone.
        job = next(e for e in result["events"] if e["event"] == "job")
        got = nodes[1].run(["ls", "-A", job["dir"]])
        assert got.returncode != 0 and "No such file" in got.stderr, got.stdout

    def test_without_x_the_settings_travel_in_mca_base_env_list(self, nodes: Cluster
                                                                  ) -> None:
        # Open MPI refuses -x with mca_base_env_list: a command without -x keeps its words.
        command = [*mpirun_argv(nodes), "env", "MASTER_ADDR=node0", "MASTER_PORT=29715",
                   "GLOO_SOCKET_IFNAME=eth0", sys.executable, str(SCRIPT)]
        result = drive(nodes, "continue", "3", command, _env())
        check_paused(result, {3})
        assert result["code"] == 0, result["stderr"][-3000:]
        assert wait_clean(nodes) == []

    def test_the_hosts_mpirun_names_are_prepared_without_hosts(self, nodes: Cluster
                                                               ) -> None:
        # -H node0:2,node1:2: node0 is this machine, node1 is prepared over SSH.
        result = drive(nodes, "continue", "2", self.command(nodes, 29725), _env(), hosts=())
        check_paused(result, {2})
        job = next(e for e in result["events"] if e["event"] == "job")
        assert [(n["node"], n["host"]) for n in job["nodes"]] == [(0, "node0"), (1, "node1")]
        assert result["code"] == 0, result["stderr"][-3000:]
        assert wait_clean(nodes) == []

    def test_stop_while_paused_leaves_nothing(self, nodes: Cluster) -> None:
        result = drive(nodes, "stop", "2,3", self.command(nodes, 29720), _env())
        check_paused(result, {2, 3})
        assert result["code"] == 128 + signal.SIGTERM, result
        assert wait_clean(nodes, 15.0) == [], result["stderr"][-2000:]



def test_srun_ranks_on_both_nodes_pause_and_stop_cleanly(slurm: Slurm) -> None:
    cluster = slurm.cluster
    command = ["srun", "-N", "2", "-n", "4", sys.executable, str(SCRIPT)]
    env = {**_env(MASTER_PORT="29730"), **slurm.env}
    # Inside an allocation (salloc, sbatch) its nodes are known: no --hosts needed.
    result = drive(cluster, "continue", "0,2", command,
                   {**env, "SLURM_JOB_NODELIST": "node[0-1]"}, hosts=())
    check_paused(result, {2})
    assert result["code"] == 0, result["stderr"][-3000:]
    assert wait_clean(cluster) == []
    result = drive(cluster, "stop", "1,3", command, {**env, "MASTER_PORT": "29731"})
    check_paused(result, {3})
    assert result["code"] == 128 + signal.SIGTERM, result
    assert wait_clean(cluster, 15.0) == [], result["stderr"][-2000:]


def test_deepspeed_hostfile_ranks_on_both_nodes_pause_and_leave_nothing(nodes: Cluster) -> None:
    """DeepSpeed's runner (pdsh over ssh, its default) starts every node's part, node 0's
    too; our settings reach them in the job's DS_ENV_FILE, after the user's
    ~/.deepspeed_env lines (here GLOO_SOCKET_IFNAME)."""
    if shutil.which("pdsh") is None:
        pytest.skip("pdsh is not installed (scripts/test.sh installs it)")
    # Not under /tmp: each node has a /tmp of its own.
    tmp_path = Path(tempfile.mkdtemp(prefix="ds-", dir=nodes.workdir))
    hostfile = tmp_path / "hostfile"
    hostfile.write_text("node0 slots=2\nnode1 slots=2\n")
    home = tmp_path / "home"
    home.mkdir()
    (home / ".deepspeed_env").write_text("GLOO_SOCKET_IFNAME=eth0\nOMP_NUM_THREADS=1\n")
    command = [sys.executable, "-m", "deepspeed.launcher.runner", "--hostfile", str(hostfile),
               "--no_ssh_check", "--master_addr", "node0", "--master_port", "29745",
               str(SCRIPT)]
    env = _env(HOME=str(home), PDSH_SSH_ARGS_APPEND=f"-F {nodes.ssh_config}",
               DS_ACCELERATOR="cpu")
    result = drive(nodes, "continue", "1,2", command, env, hosts=())
    check_paused(result, {2})
    assert result["code"] == 0, result["stderr"][-3000:]
    assert wait_clean(nodes, 15.0) == []

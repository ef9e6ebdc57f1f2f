"""What ``rankdebug launch --hosts`` adds for launchers that start the other nodes' ranks
themselves (supervise/nodes/spread.py): no cluster needed."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from rankdebug.debugplan.job_env import JobRun
from rankdebug.errors import BadInput
from rankdebug.supervise.nodes.spread import OMPI_LIST, node_map, other_hosts, spread


def job(argv: list[str], env: dict[str, str], cwd: str) -> JobRun:
    return JobRun(argv=argv, env=env, cwd=cwd, launcher="mpirun", rank_spec="1",
                  chosen=[1], host="127.0.0.1")


def test_node_map_names_each_node_by_its_host_name() -> None:
    assert node_map({"node1": "b", "node2": "c"}, "a") == "b:node1,c:node2"


@pytest.mark.parametrize(("names", "said"), [
    ({"node1": "a"}, "as node0 (this machine) does"),
    ({"node1": "b", "node2": "b"}, "as node1 does"),
    ({"node1": ""}, "no usable host name"),
    ({"node1": "b:1"}, "no usable host name"),
])
def test_node_map_refuses_nodes_that_cannot_be_told_apart(names: dict[str, str],
                                                           said: str) -> None:
    with pytest.raises(BadInput, match=re.escape(said)):
        node_map(names, "a")


def test_mpirun_with_x_gets_our_names_as_x_words(tmp_path: Path) -> None:
    here = {"PATH": "/bin", "MASTER_ADDR": "n0"}
    run = job(["mpirun", "-np", "4", "-x", "MASTER_ADDR", "python", "t.py"],
              {**here, "RANKDEBUG_JOB": "j", "PYTHONPATH": "/boot"}, str(tmp_path))
    spread(run, here, "b:node1", str(tmp_path), "mpirun")
    # Open MPI refuses -x together with mca_base_env_list: only -x words are added.
    assert run.argv == ["mpirun", "-x", "PYTHONPATH", "-x", "RANKDEBUG_JOB", "-x",
                        "RANKDEBUG_NODES", "-np", "4", "-x", "MASTER_ADDR", "python", "t.py"]
    assert OMPI_LIST not in run.env
    assert run.env["RANKDEBUG_NODES"] == "b:node1"


def test_without_x_the_names_join_the_users_env_list(tmp_path: Path) -> None:
    here = {"PATH": "/bin", OMPI_LIST: "FOO"}
    argv = ["mpirun", "-np", "2", "python", "t.py"]
    run = job(list(argv), {**here, "RANKDEBUG_JOB": "j", "NCCL_X": "1"}, str(tmp_path))
    spread(run, here, "b:node1", str(tmp_path), "mpirun")
    assert run.argv == argv
    assert run.env[OMPI_LIST] == "FOO;NCCL_X;RANKDEBUG_JOB;RANKDEBUG_NODES"


def test_srun_and_horovodrun_pass_the_environment_themselves(tmp_path: Path) -> None:
    # srun passes it all; horovodrun gives mpirun -x for each of its variables (an Open MPI
    # list of ours beside those would be refused).
    for launcher in ("srun", "horovodrun"):
        here = {"PATH": "/bin"}
        argv = [launcher, "python", "t.py"]
        run = job(list(argv), {**here, "RANKDEBUG_JOB": "j"}, str(tmp_path))
        spread(run, here, "b:node1", str(tmp_path), launcher)
        assert run.argv == argv
        assert OMPI_LIST not in run.env and "DS_ENV_FILE" not in run.env
        assert run.env["RANKDEBUG_NODES"] == "b:node1"


def test_deepspeed_env_file_keeps_the_users_lines_then_ours(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / ".deepspeed_env").write_text("NCCL_IB_DISABLE=1\n")
    work = tmp_path / "work"
    work.mkdir()
    (work / ".deepspeed_env").write_text("MY_SETTING=a=b\n")
    jobdir = tmp_path / "job"
    jobdir.mkdir()
    here = {"PATH": "/bin"}
    run = job(["deepspeed", "--hostfile", "h", "t.py"],
              {**here, "RANKDEBUG_JOB": "j", "RANKDEBUG_BREAKS": "[[\"/a\", 3]]"}, str(work))
    spread(run, here, "b:node1", str(jobdir), "deepspeed")
    path = run.env["DS_ENV_FILE"]
    assert os.path.dirname(path) == str(jobdir)
    assert os.stat(path).st_mode & 0o777 == 0o600
    # DeepSpeed's pdsh runner makes each line `export K=V;` for a shell: ours are quoted.
    assert Path(path).read_text().splitlines() == [
        "NCCL_IB_DISABLE=1", "MY_SETTING=a=b", """RANKDEBUG_BREAKS='[["/a", 3]]'""",
        "RANKDEBUG_JOB=j", "RANKDEBUG_NODES=b:node1"]
    assert OMPI_LIST not in run.env
    # DeepSpeed joins its home and working folders with the name: an absolute path wins.
    assert os.path.join(str(tmp_path / "home"), path) == path


def test_other_hosts_leaves_out_this_machine_and_repeats() -> None:
    import socket

    me = socket.gethostname()
    assert other_hosts([me, "localhost", "b", "b", "-oProxyCommand=x", f"{me}.example",
                        "c"]) == ["b", "c"]

"""Lightning scripts debugged for real (Lightning Fabric is installed): one whose Fabric starts
its own processes (``python script.py``, planned from its ``Fabric(devices=2, ...)`` call), and
one run as Slurm's tasks (``srun python script.py``, srun a stand-in modelled on Slurm's task
variables: scripts/srun_stub.py), where Lightning reads SLURM_PROCID."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from launch_helpers import SCRIPTS, Launch, line_of, read_json

from dap_client import DAPClient

pytestmark = pytest.mark.timeout(180)
SCRIPT = "fabric_ddp_script.py"


def _stop_at_rank(launch: Launch, script: str, rank: int) -> None:
    """The chosen rank stops at the script's BREAK line as Fabric's ``rank`` of a world of 2;
    the job ends well once it goes on."""
    path, line = str(SCRIPTS / script), line_of(script)
    ev = launch.event("listening")
    assert ev["rank"] == rank
    client = DAPClient(str(ev["host"]), int(ev["port"]))
    try:
        client.attach({path: [line]})
        stopped = client.stopped()
        assert stopped["reason"] == "breakpoint"
        frame = client.top_frame(stopped["threadId"])
        assert (frame["source"]["path"], frame["line"]) == (path, line)
        assert client.evaluate("fabric.world_size", frame["id"]) == "2"
        assert client.evaluate("fabric.global_rank", frame["id"]) == str(rank)
        client.request("setBreakpoints", {"source": {"path": path}, "breakpoints": []})
        client.cont(stopped["threadId"])
        assert launch.exited() == 0, launch.stderr()
    finally:
        client.close()


def test_fabric_script_is_planned_from_its_call_and_rank_0_is_debugged(tmp_path: Path) -> None:
    launch = Launch(["--ranks", "0", "--", sys.executable, SCRIPT], tmp_path)
    try:
        job = launch.event("job")
        assert (job["launcher"], job["ranks"]) == ("lightning", [0])
        _stop_at_rank(launch, SCRIPT, 0)
    finally:
        launch.close()
    # Both ranks ran the all_reduce; the copy Lightning started had LOCAL_RANK=1 and no
    # debugger.
    zero, one = read_json(tmp_path / "rank-0.json"), read_json(tmp_path / "rank-1.json")
    assert (zero["world"], zero["total"], zero["debugpy"]) == (2, 3.0, True)
    assert (one["rank"], one["local_rank"], one["debugpy"]) == (1, "1", False)


def test_srun_tasks_are_lightnings_ranks_and_any_one_is_debugged(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    srun = bin_dir / "srun"
    srun.write_text(f"#!{sys.executable}\n" + (SCRIPTS / "srun_stub.py").read_text())
    srun.chmod(0o755)
    path = f"{bin_dir}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}" + os.environ.get(
        "PATH", "")
    launch = Launch(["--ranks", "1", "--", "srun", "--ntasks-per-node", "2", sys.executable,
                     "fabric_slurm_script.py"], tmp_path, env={"PATH": path})
    try:
        job = launch.event("job")
        assert (job["launcher"], job["ranks"]) == ("srun", [1])
        _stop_at_rank(launch, "fabric_slurm_script.py", 1)
    finally:
        launch.close()
    zero, one = read_json(tmp_path / "rank-0.json"), read_json(tmp_path / "rank-1.json")
    assert zero["environment"] == one["environment"] == "SLURMEnvironment"
    assert (zero["total"], zero["debugpy"], one["debugpy"]) == (3.0, False, True)

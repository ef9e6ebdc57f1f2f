"""A script whose Lightning Fabric starts its own processes (``python script.py``, no
launcher): planned from its ``Fabric(devices=2, ...)`` call and debugged for real (Lightning
Fabric is installed)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from launch_helpers import SCRIPTS, Launch, line_of, read_json

from dap_client import DAPClient

pytestmark = pytest.mark.timeout(180)
SCRIPT = "fabric_ddp_script.py"


def test_fabric_script_is_planned_from_its_call_and_rank_0_is_debugged(tmp_path: Path) -> None:
    launch = Launch(["--ranks", "0", "--", sys.executable, SCRIPT], tmp_path)
    path = str(SCRIPTS / SCRIPT)
    line = line_of(SCRIPT)
    try:
        job = launch.event("job")
        assert (job["launcher"], job["ranks"]) == ("lightning", [0])
        ev = launch.event("listening")
        assert ev["rank"] == 0
        client = DAPClient(str(ev["host"]), int(ev["port"]))
        try:
            client.attach({path: [line]})
            stopped = client.stopped()
            assert stopped["reason"] == "breakpoint"
            frame = client.top_frame(stopped["threadId"])
            assert (frame["source"]["path"], frame["line"]) == (path, line)
            assert client.evaluate("fabric.world_size", frame["id"]) == "2"
            assert client.evaluate("fabric.global_rank", frame["id"]) == "0"
            client.request("setBreakpoints", {"source": {"path": path}, "breakpoints": []})
            client.cont(stopped["threadId"])
            assert launch.exited() == 0, launch.stderr()
        finally:
            client.close()
    finally:
        launch.close()
    # Both ranks ran the all_reduce; the copy Lightning started had LOCAL_RANK=1 and no
    # debugger.
    zero, one = read_json(tmp_path / "rank-0.json"), read_json(tmp_path / "rank-1.json")
    assert (zero["world"], zero["total"], zero["debugpy"]) == (2, 3.0, True)
    assert (one["rank"], one["local_rank"], one["debugpy"]) == (1, "1", False)

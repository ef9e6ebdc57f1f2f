"""Breakpoints sent with the launch (``RANKDEBUG_PRESET``, gate_preset): a chosen rank runs
at once, before any client has said a word, and stops where the client's breakpoints say.
Real ``rankdebug launch``, real debugpy, our DAP client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from launch_helpers import Launch, wait_for

from dap_client import DAPClient

SCRIPT = """\
import os
import time

marks = os.environ["MARKER_DIR"]
for i in range(400):
    open(os.path.join(marks, f"step-{i}"), "w").close()
    x = i * 2  # BREAK
    time.sleep(0.05)
print("done", x)
"""


def _script(tmp: Path) -> tuple[str, int]:
    path = tmp / "steps.py"
    path.write_text(SCRIPT)
    line = next(n for n, t in enumerate(SCRIPT.splitlines(), 1) if "# BREAK" in t)
    return str(path), line


def _preset(path: str, bp: dict[str, Any], filters: list[str] | None = None) -> str:
    return json.dumps({"breakpoints": [{"source": {"path": path}, "breakpoints": [bp]}],
                       "exceptionFilters": ["uncaught"] if filters is None else filters})


@pytest.mark.timeout(120)
def test_conditional_breakpoint_with_the_launch_stops_at_its_first_true_hit(
        tmp_path: Path) -> None:
    """The rank runs its script before any client connects (no setBreakpoints before it),
    and the condition sent with the launch holds: it stops at i == 3, not at its first pass."""
    path, line = _script(tmp_path)
    bp = {"line": line, "condition": "i == 3"}
    launch = Launch(["--ranks", "0", "--attach", "hit", "--", sys.executable, path], tmp_path,
                    env={"RANKDEBUG_PRESET": _preset(path, bp)})
    try:
        ev = launch.event("listening")
        # No client yet: the rank is past its first line all the same.
        wait_for("the rank to run with no client", (tmp_path / "step-0").exists, 60)
        client = DAPClient(str(ev["host"]), int(ev["port"]))
        client.request("initialize", {"clientID": "rankdebug-tests", "adapterID": "debugpy",
                                      "pathFormat": "path", "linesStartAt1": True,
                                      "columnsStartAt1": True})
        attach_seq = client.send("attach", {"justMyCode": True})
        client.wait_event("initialized", 60)
        client.request("setBreakpoints", {"source": {"path": path}, "breakpoints": [bp]})
        client.request("setExceptionBreakpoints", {"filters": ["uncaught"]})
        client.request("configurationDone", {}, 60)
        client.response(attach_seq, 60)
        stopped = client.stopped()
        assert stopped["reason"] == "breakpoint"
        frame = client.top_frame(stopped["threadId"])
        assert frame["line"] == line
        assert client.evaluate("i", frame["id"]) == "3"
        client.request("setBreakpoints", {"source": {"path": path}, "breakpoints": []})
        client.request("disconnect", {"terminateDebuggee": True})
        client.close()
    finally:
        launch.close()


@pytest.mark.timeout(120)
def test_breakpoint_bound_to_another_rank_lets_the_rank_run_to_its_end(
        tmp_path: Path) -> None:
    """A breakpoint bound to rank 1 (``ranks 1``) sent with the launch: rank 0 waits for no
    client and plants nothing there; the job ends by itself with no client ever."""
    path, line = _script(tmp_path)
    short = Path(path).read_text().replace("range(400)", "range(3)")
    Path(path).write_text(short)
    launch = Launch(["--ranks", "0", "--attach", "hit", "--", sys.executable, path], tmp_path,
                    env={"RANKDEBUG_PRESET": _preset(path, {"line": line,
                                                            "condition": "ranks 1"})})
    try:
        t0 = time.monotonic()
        assert launch.exited(60) == 0
        assert (tmp_path / "step-2").exists()
        assert time.monotonic() - t0 < 60
        assert not [e for e in launch.events if e.get("event") == "attached"]
    finally:
        launch.close()


@pytest.mark.parametrize(("preset", "says", "line"), [
    ('{"breakpoints": [\n  {', "not JSON", 2),
    ('["x"]', "expected an object", None),
    ('{"breakpoints": [{"source": {}, "breakpoints": []}]}', "breakpoints[0] needs", None),
    ('{"breakpoints": [{"source": {"path": "/a.py"}, "breakpoints": [{"line": 0}]}]}',
     "breakpoints[0].breakpoints[0] needs a line", None),
    ('{"exceptionFilters": "raised"}', "exceptionFilters must be", None),
])
@pytest.mark.timeout(60)
def test_bad_preset_is_one_line_with_where(tmp_path: Path, preset: str, says: str,
                                           line: int | None) -> None:
    """Nothing starts; the error names the variable, what is wrong and (JSON) where."""
    env = {**os.environ, "RANKDEBUG_PRESET": preset}
    got = subprocess.run([sys.executable, "-m", "rankdebug", "launch", "--json", "--ranks", "0",
                          "--", sys.executable, "-c", "pass"], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=50, check=False)
    assert got.returncode == 2, got.stderr
    error = json.loads(got.stdout)["error"]
    assert error["message"].startswith("RANKDEBUG_PRESET: ") and says in error["message"]
    assert error.get("line") == line
    assert "Traceback" not in got.stderr

"""Where a rank waiting at a breakpoint is, as ``rankdebug stacks`` and the debugger show it,
for real (torchrun, gloo, CPU, real debugpy, our DAP client):

- a chosen rank that reached a ``--break`` breakpoint with no client (``--no-wait``) waits
  in the hit-hook planted before that line: stacks show the breakpoint's line, not line 0;
- ``rankdebug.breakpoint()``: stacks show the user's line that called it, no frame of ours,
  on the chosen rank and on the rank waiting for it; the debugger stops on that line (not
  the next), with no frame of ours on its stack; Step Over goes to the next line, and
  Continue lets the other rank go on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from launched import cli_json, line_of, start, wait_for

from dap_client import DAPClient

pytestmark = pytest.mark.timeout(240)

COUNTED = line_of("raise_train.py", "# COUNTED")
CALL = line_of("break_call.py", "# CALL")
AFTER = line_of("break_call.py", "# AFTER")


def _main_frames(job: str, rank: int) -> list[tuple[str, str, int]]:
    report = cli_json("stacks", job)[0]
    found = next(r for r in report["ranks"] if r["rank"] == rank)
    main = next(t for t in found["threads"] if t["main"])
    return [(f["name"], f["file"], f["line"]) for f in main["frames"]]


def _ours(frames: list[tuple[str, str, int]]) -> list[tuple[str, str, int]]:
    return [f for f in frames if "/rankdebug/" in f[1] or f[1].endswith("sitecustomize.py")]


def test_a_rank_waiting_at_its_break_shows_the_breakpoint_line(tmp_path: Path) -> None:
    script = str(Path(__file__).resolve().parent / "scripts" / "raise_train.py")
    launch = start(tmp_path, ["--ranks", "0", "--no-wait", "--break", f"{script}:{COUNTED}"],
                   "raise_train.py", env={"RAISE_STEP": "0"})
    try:
        ev = launch.event("listening", 120)  # the hit: it listens, and waits for a client
        assert ev["rank"] == 0
        job = str(launch.job)
        frames = wait_for("rank 0 at its breakpoint", lambda: (
            got if (got := _main_frames(job, 0)) and got[0][0] == "main" else None),
            60, launch)
        assert (frames[0][0], Path(frames[0][1]).name, frames[0][2]) == (
            "main", "raise_train.py", COUNTED), frames
        assert not _ours(frames), frames
        client = DAPClient(str(ev["host"]), int(ev["port"]), timeout=60)
        launch._clients.append(client)
        client.attach({script: [COUNTED]})
        stopped = client.stopped(60)
        assert client.top_frame(stopped["threadId"])["line"] == COUNTED
    finally:
        launch.close()


def _stack(client: DAPClient, thread: int) -> list[dict[str, Any]]:
    frames: list[dict[str, Any]] = client.request(
        "stackTrace", {"threadId": thread})["stackFrames"]
    return frames


def test_rankdebug_breakpoint_stops_on_its_line_with_no_frame_of_ours(tmp_path: Path) -> None:
    launch = start(tmp_path, ["--arm"], "break_call.py")
    try:
        ev = launch.event("listening", 120)
        assert ev["rank"] == 0
        job = str(launch.job)
        for rank in (0, 1):
            frames = wait_for(f"rank {rank} in the breakpoint", lambda r=rank: (
                got if (got := _main_frames(job, r)) and got[0][0] == "checkpoint" else None),
                60, launch)
            assert (Path(frames[0][1]).name, frames[0][2]) == ("break_call.py", CALL), frames
            assert not _ours(frames), frames
        client = DAPClient(str(ev["host"]), int(ev["port"]), timeout=60)
        launch._clients.append(client)
        client.attach({})
        stopped = client.stopped(60)
        thread = int(stopped["threadId"])
        stack = _stack(client, thread)
        assert (stack[0]["name"], stack[0]["line"]) == ("checkpoint", CALL), stack
        assert not [f for f in stack if "rankdebug" in str((f.get("source") or {}).get("path"))]
        assert client.evaluate("step", stack[0]["id"]) == "41"
        assert not (tmp_path / "after-1").exists()  # rank 1 waits for rank 0
        seq = len(client.events)
        client.request("next", {"threadId": thread})
        stepped = client.stopped(60, after=seq)
        assert stepped["reason"] == "step", stepped
        assert client.top_frame(int(stepped["threadId"]))["line"] == AFTER
        client.cont(int(stepped["threadId"]))
        assert launch.exited() == 0
        assert (tmp_path / "after-1").read_text() == "42"
    finally:
        launch.close()

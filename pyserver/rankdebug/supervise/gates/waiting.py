"""A rank the job paused while it waits in native code: shown stopped before it is.

A rank blocked inside a collective (its peer is stopped at a breakpoint) runs no Python, so
neither debugpy's pause nor the attach signal takes effect until the collective returns. Its
stack is read from outside (py-spy, without stopping it) and the gate shows the client a stop
of its own: reason ``pause``, "waiting in all_reduce #4 (DDP bucket, from backward)" (the
collective as the rank's Flight Recorder names it, ``runtime.collectives``), the frames as
read. debugpy's pause
stays asked: when the collective returns, the rank stops for real and the client gets
debugpy's own ``stopped`` event and frames, with variables. Until then the gate answers the
requests about that thread itself; Continue cancels the pause.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

FRAME_BASE = 1 << 30  # frame ids of ours: far above debugpy's
# Requests a waiting rank cannot carry out until its collective returns.
CANNOT = frozenset({"next", "stepIn", "stepOut", "stepBack", "goto", "setVariable",
                    "setExpression", "restartFrame"})


@dataclass(frozen=True)
class WaitFrame:
    name: str
    file: str
    line: int
    library: bool


@dataclass
class Waiting:
    rank: int
    thread: int
    # "all_reduce #4 (DDP bucket, from backward)", "all_reduce" where the rank could not say
    # more, or the innermost function when no collective is known
    what: str
    frames: list[WaitFrame]  # innermost first

    def stopped_event_body(self) -> dict[str, Any]:
        return {"reason": "pause", "threadId": self.thread, "allThreadsStopped": False,
                "description": f"Paused: waiting in {self.what}",
                "text": f"rank {self.rank} waits in {self.what}; its variables show once "
                        "it returns"}

    def answer(self, req: dict[str, Any]) -> tuple[bool, dict[str, Any] | None, str | None]:
        """(handled, body, error message) for a client request while the rank waits."""
        command = req.get("command")
        args = req.get("arguments") or {}
        frame = args.get("frameId")
        ours = isinstance(frame, int) and frame >= FRAME_BASE
        if command == "stackTrace" and args.get("threadId") == self.thread:
            start = int(args.get("startFrame") or 0)
            levels = int(args.get("levels") or 0) or len(self.frames)
            frames = [self._frame(i) for i in range(start, min(len(self.frames),
                                                                start + levels))]
            return True, {"stackFrames": frames, "totalFrames": len(self.frames)}, None
        if command == "scopes" and ours:
            return True, {"scopes": [{"name": f"Waiting in {self.what}", "expensive": False,
                                      "variablesReference": 0}]}, None
        if command in ("evaluate", "completions") and ours:
            return True, None, self._why()
        if command in CANNOT:
            return True, None, self._why()
        if command == "pause":
            return True, {}, None
        return False, None, None

    def _why(self) -> str:
        return (f"rank {self.rank} waits in {self.what} (a peer is stopped): it can be "
                "inspected and stepped once that returns; Continue lets it run on")

    def _frame(self, i: int) -> dict[str, Any]:
        f = self.frames[i]
        frame: dict[str, Any] = {"id": FRAME_BASE + i, "name": f.name, "line": f.line,
                                 "column": 1}
        if os.path.isabs(f.file):
            frame["source"] = {"path": f.file, "name": os.path.basename(f.file)}
        if f.library:
            frame["presentationHint"] = "subtle"
        return frame


def main_thread(resp: dict[str, Any], fallback: int | None) -> int:
    """The id of ``MainThread`` in a ``threads`` response (else ``fallback``, else the
    first)."""
    threads = (resp.get("body") or {}).get("threads") or []
    for t in threads:
        if isinstance(t, dict) and t.get("name") == "MainThread" and isinstance(t.get("id"), int):
            return int(t["id"])
    if fallback is not None:
        return fallback
    first = threads[0] if threads and isinstance(threads[0], dict) else {}
    return int(first.get("id") or 0)

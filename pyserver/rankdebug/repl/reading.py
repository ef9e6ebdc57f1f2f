"""Reading the terminal debugger's stopped ranks: each one's stack (``where``) and the value
of an expression in its top frame (``p``), asked of all of them at once."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from rankdebug.repl import render
from rankdebug.repl.link import LinkError
from rankdebug.repl.views import RankView, SessionError

EVAL_S = 15.0


def _stopped(views: list[RankView]) -> tuple[list[RankView], list[str]]:
    """Of the current ranks' ``views``, those stopped, and a line for each that is not."""
    if not views:
        raise SessionError("no rank is held (see `list`)")
    notes = [f"rank {v.rank}: {render.state_text(v.state, v.reason, v.waiting_in)}"
             for v in views if v.state != "stopped" or v.link is None]
    return [v for v in views if v.state == "stopped" and v.link is not None], notes


def stacks(views: list[RankView], cwd: str) -> list[str]:
    """The stacks of the current ranks' ``views`` that are stopped; raises SessionError."""
    stopped, notes = _stopped(views)

    def read(v: RankView) -> tuple[int, list[render.Where] | str]:
        assert v.link is not None
        try:
            frames = v.link.request("stackTrace", {"threadId": v.thread or 0,
                                                   "startFrame": 0, "levels": 64})
        except LinkError as exc:
            return v.rank, str(exc)
        return v.rank, [render.Where.of(f) for f in frames.get("stackFrames") or []]

    with ThreadPoolExecutor(max_workers=min(32, len(stopped) or 1)) as pool:
        got = list(pool.map(read, stopped))
    return render.stacks(got, cwd) + notes


def evaluate(views: list[RankView], expr: str) -> list[str]:
    """``expr``'s value on each of the current ranks' ``views`` that is stopped; raises
    SessionError."""
    stopped, notes = _stopped(views)

    def one(v: RankView) -> dict[str, Any]:
        assert v.link is not None
        try:
            frames = v.link.request("stackTrace", {"threadId": v.thread or 0,
                                                   "startFrame": 0, "levels": 1})
            top = (frames.get("stackFrames") or [{}])[0]
            args: dict[str, Any] = {"expression": expr, "context": "repl"}
            if isinstance(top.get("id"), int):
                args["frameId"] = top["id"]
            body = v.link.request("evaluate", args, EVAL_S)
        except LinkError as exc:
            return {"rank": v.rank, "text": f"error: {render.last_line(str(exc))}",
                    "type": "error"}
        return {"rank": v.rank, "text": str(body.get("result", "")),
                "type": str(body.get("type") or "")}

    with ThreadPoolExecutor(max_workers=min(32, len(stopped) or 1)) as pool:
        results = list(pool.map(one, stopped))
    return render.values(results) + notes

"""One rank over the reads: where it is, and what it did there.

- ``waiting``: in the same collective in every read (the same sequence number where its
  handler gives one; where only its stack names the collective, the same stack and a main
  thread that never woke, so it did not finish one and enter the next);
- ``running``: it moved: its place in its code or in its groups' collectives changed;
- ``stuck``: in the same place in every read (the same function, called from the same
  lines; a spinning loop moves between the lines of one function). Blocked (its main thread
  never woke and hardly ran) it is stuck for sure; busy or waking up, it is stuck only if
  ranks wait for it in a collective (``findings.settle``), as a healthy rank can compute or
  sleep in one function for a second;
- ``raised`` (held at an uncaught exception), ``exited`` (no longer running), ``unknown``
  (never read, or read once: one read proves nothing).

``where`` is the innermost frame of the user's code; for a running rank, the innermost one
it stayed in all along (its loop).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from rankdebug.jobs.analysis.stacks import RankStack
from rankdebug.jobs.diagnose.activity import Activity
from rankdebug.jobs.discover import Rank
from rankdebug.pyspy import Frame, Thread

STATES = ("waiting", "running", "stuck", "exited", "raised", "unknown")


def frame_json(frame: Frame | None) -> dict[str, Any]:
    if frame is None:
        return {"file": None, "line": None, "function": None}
    return {"file": frame.file, "line": frame.line, "function": frame.name}


def frame_of(data: Any) -> Frame | None:
    if not isinstance(data, dict) or not isinstance(data.get("file"), str):
        return None
    line = data.get("line")
    return Frame(str(data.get("function") or "?"), data["file"],
                 line if isinstance(line, int) and not isinstance(line, bool) else 0)


def user_index(frames: list[Frame]) -> int:
    """The innermost frame of the user's code (innermost first), else the innermost."""
    return next((i for i, f in enumerate(frames) if not f.library), 0)


def where(frames: list[Frame]) -> Frame | None:
    return frames[user_index(frames)] if frames else None


def function_name(frame: Frame) -> str:
    """A function's own name: py-spy qualifies a nested one (``outer.<locals>.wrapper``), a
    handler does not (``wrapper``)."""
    return frame.name.rsplit(".", 1)[-1]


def stack_key(frames: list[Frame]) -> tuple[tuple[str, str, int], ...]:
    return tuple((f.file, function_name(f), f.line) for f in frames)


def place(frames: list[Frame]) -> tuple[Hashable, ...]:
    """The user's innermost function and the lines that called it: equal while a rank
    stays in that function, whatever line of it runs."""
    if not frames:
        return ()
    u = user_index(frames)
    return ((frames[u].file, function_name(frames[u])), *stack_key(frames[u + 1:]))


def call_path(frames: list[Frame], frame: Frame | None) -> tuple[Hashable, ...]:
    """The functions from the outermost frame down to ``frame`` (one of ``frames``)."""
    if frame is None:
        return ()
    at = next((i for i, f in enumerate(frames) if f == frame), None)
    if at is None:
        return ((frame.file, function_name(frame)),)
    return tuple((f.file, function_name(f)) for f in reversed(frames[at:]))


def anchor(stacks: list[list[Frame]]) -> Frame | None:
    """The innermost user frame that every read shows, reached through the same calls (the
    loop a running rank stays in), with the last read's line."""
    outer = [list(reversed(s)) for s in stacks if s]
    if not outer:
        return None
    found: Frame | None = None
    depth = 0
    while all(len(s) > depth for s in outer):
        if len({(s[depth].file, function_name(s[depth])) for s in outer}) != 1:
            break
        if not outer[-1][depth].library:
            found = outer[-1][depth]
        if len({s[depth].line for s in outer}) != 1:
            break  # the same function, called or calling from different lines: stop here
        depth += 1
    return found or where(stacks[-1])


def _main(rs: RankStack) -> Thread | None:
    held = next((t for t in rs.threads if t.raised), None)
    return held or next((t for t in rs.threads if t.main), None)


def position(rs: RankStack) -> dict[str, Any] | None:
    """The collective the rank waits in: {"op", "seq", "group"} (seq and group from its
    handler, None where only its stack names it), and "context" where its handler says who
    issued it (DDP's reducer inside ``backward``)."""
    current = (rs.collectives or {}).get("current")
    if isinstance(current, dict) and isinstance(current.get("op"), str):
        seq = current.get("seq")
        group = current.get("group")
        found = {"op": current["op"], "seq": seq if isinstance(seq, int) else None,
                 "group": str(group) if group is not None else None}
        if isinstance(current.get("context"), str) and current["context"]:
            found["context"] = current["context"]  # who issued it: "DDP bucket, from backward"
        return found
    if rs.collective:
        return {"op": str(rs.collective.get("name")), "seq": None, "group": None}
    return None


def _held(positions: list[dict[str, Any] | None], frames: list[list[Frame]],
          activity: Activity | None) -> dict[str, Any] | None:
    """The collective a rank was in at every read, the very same one: its number the same in
    two reads or more (its handler's), else the same stack and a thread that never woke (a
    read that fell back to py-spy has no number: it names the same operation)."""
    if not positions or any(p is None for p in positions):
        return None
    found = [p for p in positions if p is not None]
    if len({p["op"] for p in found}) != 1:
        return None
    numbered = [p for p in found if p["seq"] is not None]
    if len({(p["seq"], p["group"]) for p in numbered}) > 1:
        return None
    if len(numbered) >= 2:
        return numbered[-1]
    if len({stack_key(f) for f in frames}) == 1 and (activity is None or activity.wakes == 0):
        return numbered[-1] if numbered else found[-1]
    return None


def _marks(rs: RankStack) -> Hashable:
    """How far the rank's groups have got (its handler's counters); None without them."""
    state = rs.collectives
    if not isinstance(state, dict):
        return None
    groups = state.get("groups")
    issued = tuple(sorted((str(name), info.get("issued"), info.get("done"))
                          for name, info in groups.items() if isinstance(info, dict))
                   ) if isinstance(groups, dict) else ()
    current = position(rs)
    return (tuple(sorted(current.items())) if current else None, issued)


@dataclass
class Seen:
    rank: int | None
    pid: int | None
    host: str | None
    state: str = "unknown"
    manner: str | None = None  # its main thread: busy | blocked | waking (``activity``)
    firm: bool = True  # stuck for sure (blocked); else only if ranks wait for it
    moved: bool = False  # its place in its code changed between reads
    progressed: bool | None = None  # its groups' collectives went on (None: no handler)
    via: str | None = None
    frames: list[Frame] = field(default_factory=list)  # innermost first, the last read's
    where: Frame | None = None
    collective: dict[str, Any] | None = None  # {"op", "seq", "group"} it waits in
    collectives: dict[str, Any] | None = None  # its handler's account at the last read
    seconds: float = 0.0  # the time watched
    cpu: float | None = None  # percent of one core over the time measured
    wakes: int | None = None
    reads: int = 0  # reads that gave its stack
    waited: int = 0  # reads that found it in a collective
    reason: str | None = None  # why it is unknown or exited
    raised: dict[str, Any] | None = None
    debugger: bool = False  # a debugger is attached to it (it may be stopped there)

    def to_json(self) -> dict[str, Any]:
        """The ``rank`` event (``--hosts`` reads other nodes' through it)."""
        return {"event": "rank", "rank": self.rank, "pid": self.pid, "host": self.host,
                "state": self.state, "manner": self.manner, "firm": self.firm,
                "moved": self.moved, "progressed": self.progressed,
                "via": self.via, "collective": self.collective,
                "where": frame_json(self.where) if self.where else None,
                "frames": [frame_json(f) for f in self.frames],
                "collectives": self.collectives, "seconds": self.seconds, "cpu": self.cpu,
                "wakes": self.wakes, "reads": self.reads, "waited": self.waited,
                "reason": self.reason, "raised": self.raised, "debugger": self.debugger}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Seen:
        def num(name: str) -> Any:
            value = data.get(name)
            return value if isinstance(value, (int, float)) and not isinstance(value, bool) \
                else None

        def obj(name: str) -> Any:
            return data[name] if isinstance(data.get(name), dict) else None

        state = data.get("state")
        progressed = data.get("progressed")
        return cls(
            rank=num("rank"), pid=num("pid"),
            host=str(data["host"]) if data.get("host") is not None else None,
            state=state if state in STATES else "unknown",
            manner=str(data["manner"]) if data.get("manner") else None,
            firm=data.get("firm") is not False, moved=data.get("moved") is True,
            progressed=progressed if isinstance(progressed, bool) else None,
            via=str(data["via"]) if data.get("via") else None,
            frames=[f for f in map(frame_of, data.get("frames") or []) if f is not None],
            where=frame_of(data.get("where")), collective=obj("collective"),
            collectives=obj("collectives"), seconds=float(num("seconds") or 0.0),
            cpu=num("cpu"), wakes=num("wakes"), reads=int(num("reads") or 0),
            waited=int(num("waited") or 0),
            reason=str(data["reason"]) if data.get("reason") else None,
            raised=obj("raised"), debugger=data.get("debugger") is True)


def judge(rank: Rank, stacks: list[RankStack], activity: Activity | None, seconds: float,
          gone: bool) -> Seen:
    """What the reads of ``rank`` (oldest first) show; ``gone``: it ended meanwhile."""
    seen = Seen(rank.rank, rank.pid, rank.host, seconds=seconds,
                debugger=rank.state in ("attached", "paused"))
    ok = [rs for rs in stacks if rs.error is None and _main(rs) is not None]
    seen.reads = len(ok)
    if ok:
        seen.via = ok[-1].via
        seen.collectives = ok[-1].collectives
    if activity is not None:
        seen.cpu, seen.wakes, seen.manner = activity.cpu, activity.wakes, activity.manner()
    if gone:
        seen.state, seen.reason = "exited", "exited while it was read"
        return seen
    held = next((t for t in ok[-1].threads if t.raised), None) if ok else None
    if held is not None or rank.raised:
        seen.state = "raised"
        seen.raised = dict(held.raised) if held is not None and held.raised else rank.raised
        seen.frames = held.frames if held is not None else []
        raised = seen.raised or {}
        seen.where = frame_of({"file": raised.get("file"), "line": raised.get("line"),
                               "function": raised.get("function")}) or where(seen.frames)
        return seen
    if not ok:
        seen.reason = next((rs.error for rs in reversed(stacks) if rs.error), None) \
            or "no Python stack"
        return seen
    frames = [t.frames for t in map(_main, ok) if t is not None]
    seen.frames = frames[-1]
    positions = [position(rs) for rs in ok]
    seen.waited = sum(1 for p in positions if p is not None)
    if len(ok) < 2:
        seen.where = where(seen.frames)
        seen.reason = "read only once"
        return seen
    marks = {m for m in map(_marks, ok) if m is not None}
    if marks:
        seen.progressed = len(marks) > 1
    seen.moved = bool(seen.progressed) or len({place(f) for f in frames}) > 1
    held_in = _held(positions, frames, activity)
    if not seen.moved and held_in is not None:
        seen.state, seen.collective = "waiting", held_in
        seen.where = where(seen.frames)
        return seen
    if all(p is not None for p in positions):
        seen.moved = True  # in the same call each time, but it woke: it may have gone round
    if seen.moved:
        seen.state = "running"
        seen.where = anchor(frames)
        return seen
    seen.state = "stuck"
    seen.where = where(seen.frames)
    seen.firm = activity is not None and activity.blocked
    return seen

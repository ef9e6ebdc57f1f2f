"""The terminal debugger's group commands (``continue``, ``next``, ``step``, ``finish``,
``pause`` for the current ranks): sent through the job's control socket (``ctl.sock``,
answered by ``supervise.together`` as the extension's Continue All is), then waited for until
the ranks have stopped again, are blocked in a collective, or have ended."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

from rankdebug import ranks as rankspec
from rankdebug.repl import render
from rankdebug.repl.link import LinkError
from rankdebug.repl.views import RankView, Say, SessionError
from rankdebug.runtime.wire import WireError, ask

# After the first rank of a group command stops, how long the others have to stop too (stop
# together pauses them; an untraced one attaches first, seconds on a loaded machine).
SETTLE_S = 20.0
BLOCKED_READ_S = 0.5  # how often a moving rank's registry entry is read for "blocked"
CTL_S = 15.0
JOB_END_S = 10.0  # a launcher ends within this of its last rank (torchrun: ~1 s)
GROUP = {"continue": {"command": "continue"}, "pause": {"command": "pause"},
         "next": {"command": "step", "kind": "over"}, "step": {"command": "step", "kind": "in"},
         "finish": {"command": "step", "kind": "out"}}


@dataclass
class Flight:
    """A group command whose ranks have not all stopped again."""

    ranks: set[int]
    before: dict[int, int]  # rank -> its stops before the command
    done: set[int] = field(default_factory=set)
    blocked: dict[int, str] = field(default_factory=dict)
    first_at: float | None = None


class Board(Protocol):
    """What a group command reads and moves of the session (``session.Session``): the rank
    views and flags, guarded by ``cond``, which the event thread notifies on every change."""

    views: dict[int, RankView]
    cond: threading.Condition
    flight: Flight | None
    ended: int | None
    own: bool
    run_once: bool
    job_dir: str
    cwd: str
    say: Say

    def chosen(self) -> list[int]: ...

    def held(self) -> list[int]: ...

    def entries(self) -> dict[int, dict[str, Any]]: ...


def go(s: Board, what: str, interrupted: Callable[[], bool]) -> None:
    """``what`` for the current ranks of ``s``, then wait until they have stopped again (or
    are blocked, or have ended); raises SessionError."""
    group = s.chosen()
    if not group:
        raise SessionError("no rank is held (see `list`)")
    views = [s.views[r] for r in group]
    unstarted = [v.rank for v in views if v.state == "waiting"]
    if unstarted and what != "continue":
        raise SessionError(f"{rankspec.label(unstarted)} not started yet: `c` runs "
                           f"{'them' if len(unstarted) > 1 else 'it'} to a breakpoint")
    if what in ("next", "step", "finish"):
        blocked = [v for v in views if v.state == "stopped" and v.waiting_in]
        for v in blocked:
            s.say(f"rank {v.rank}: blocked in {v.waiting_in}; it steps once its "
                  "collective returns (continue its peers)")
        group = [v.rank for v in views if v.state == "stopped" and not v.waiting_in]
        if not group:
            if not blocked:
                raise SessionError(f"{what}: no current rank is stopped")
            return
    elif what == "continue":
        # A running rank is waited for: `c` after `b` waits for the breakpoint.
        group = [v.rank for v in views if v.state in ("stopped", "waiting", "running")]
        if not group:
            raise SessionError("continue: no current rank is stopped or running")
    else:
        group = [v.rank for v in views if v.state == "running"]
        if not group:
            raise SessionError("pause: every current rank is stopped already")
    with s.cond:
        flight = Flight(set(group), {r: s.views[r].stops for r in group})
        s.flight = flight
    try:
        _send(s, what, group)
        _wait(s, flight, interrupted)
        with s.cond:  # every held rank ended: the job's own end is near, wait for it
            if s.own and not s.held():
                s.cond.wait_for(lambda: s.ended is not None, JOB_END_S)
    finally:
        with s.cond:
            s.flight = None
    _summary(s, flight)


def _send(s: Board, what: str, group: list[int]) -> None:
    starting = [r for r in group if s.views[r].state == "waiting"]
    s.run_once = s.run_once or bool(starting)
    others = [r for r in group if r not in starting
              and (what == "pause" or s.views[r].state == "stopped")]
    if others:
        # Running from now, before the job answers: its next stop may come first.
        moved = {r: s.views[r].stops for r in others
                 if what != "pause" and s.views[r].state == "stopped"}
        with s.cond:
            for r in moved:
                s.views[r].state = "running"
        cmd = dict(GROUP[what], ranks=rankspec.compact(others))
        try:
            reply = ask(os.path.join(s.job_dir, "ctl.sock"), cmd, timeout=CTL_S)
        except WireError as exc:
            reply = {"ranks": [], "error": str(exc)}
        acted = reply.get("ranks")
        acted = acted if isinstance(acted, list) else []
        with s.cond:
            assert s.flight is not None
            for r in others:
                if r in acted:
                    continue
                s.flight.ranks.discard(r)  # nothing to wait for
                v = s.views[r]
                if r in moved and v.state == "running" and v.stops == moved[r]:
                    v.state = "stopped"
            s.cond.notify_all()
        if "error" in reply:
            s.say(f"*** {what}: {_message(reply['error'])}")

    def start(rank: int) -> None:
        link = s.views[rank].link
        assert link is not None
        try:
            link.configure()
        except LinkError as exc:
            s.say(f"rank {rank}: {exc}")
        with s.cond:
            if s.views[rank].state == "waiting":
                s.views[rank].state = "running"
            s.cond.notify_all()

    with ThreadPoolExecutor(max_workers=min(32, len(starting) or 1)) as pool:
        list(pool.map(start, starting))


def _wait(s: Board, flight: Flight, interrupted: Callable[[], bool]) -> None:
    read_at = time.monotonic() + 1.0  # the group layer reads a late rank after 1 s
    while True:
        with s.cond:
            for r in flight.ranks - flight.done:
                v = s.views[r]
                if (v.state == "stopped" and v.stops > flight.before[r]) or \
                        v.state in ("exited", "gone") or r in flight.blocked:
                    flight.done.add(r)
                    if flight.first_at is None:
                        flight.first_at = time.monotonic()
            left = flight.ranks - flight.done
            if not left or s.ended is not None:
                return
            if flight.first_at is not None and \
                    time.monotonic() - flight.first_at > SETTLE_S:
                return
            s.cond.wait(0.2)
        if interrupted():
            return
        if time.monotonic() >= read_at:
            read_at = time.monotonic() + BLOCKED_READ_S
            _read_blocked(s, flight, left)


def _read_blocked(s: Board, flight: Flight, left: set[int]) -> None:
    """A rank the group layer found waiting in a collective (its registry entry)."""
    entries = s.entries()
    with s.cond:
        for r in left:
            entry = entries.get(r, {})
            if entry.get("state") == "blocked" and isinstance(entry.get("collective"), str):
                seq = entry.get("seq")
                flight.blocked[r] = entry["collective"] + (f" #{seq}" if isinstance(
                    seq, int) else "")
        s.cond.notify_all()


def _summary(s: Board, flight: Flight) -> None:
    with s.cond:
        for r, what in flight.blocked.items():
            if s.views[r].state == "running":
                s.views[r].blocked = what
        views = [s.views[r] for r in sorted(flight.ranks)]
    for line in render.arrivals(views, flight.blocked, s.cwd):
        s.say(line)


def _message(error: object) -> str:
    """The text of a control socket's error answer (``{"message": ...}``, or a string)."""
    if isinstance(error, dict):
        return str(error.get("message") or error)
    return str(error)

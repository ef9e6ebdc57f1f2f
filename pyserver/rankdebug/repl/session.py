"""The terminal debugger's state: one ``Link`` per chosen rank, what each rank is doing, the
current ranks, the breakpoints; group commands go through the job's control socket
(``ctl.sock``, answered by ``supervise.together`` as the extension's Continue All is).

Events of the links are handled on one thread (``_dispatch``), in order: a ``stopped`` is
located (its top frame) before anyone is told, so a command that waits for its ranks to stop
finds where each stopped as soon as it sees it stopped."""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from rankdebug import ranks as rankspec
from rankdebug.jobs.coords_value import valid as valid_coords
from rankdebug.repl import render
from rankdebug.repl.commands import BadCommand, BreakSpec, parse_break
from rankdebug.repl.link import Link, LinkError
from rankdebug.runtime import registry
from rankdebug.runtime.wire import WireError, ask, ask_timed
from rankdebug.supervise.gate_waiting import main_thread

# After the first rank of a group command stops, how long the others have to stop too (stop
# together pauses them; an untraced one attaches first, seconds on a loaded machine).
SETTLE_S = 20.0
BLOCKED_READ_S = 0.5  # how often a moving rank's registry entry is read for "blocked"
CTL_S = 15.0
EXIT_SEEN_S = 1.0  # a closed connection: how long its rank's end may take to show
JOB_END_S = 10.0  # a launcher ends within this of its last rank (torchrun: ~1 s)
EVAL_S = 15.0
COORDS_S = 1.0  # a rank's handler answers in milliseconds, even while the rank is stopped
MAX_SOURCE = 64 << 20  # a breakpoint's file is read to count its lines
GROUP = {"continue": {"command": "continue"}, "pause": {"command": "pause"},
         "next": {"command": "step", "kind": "over"}, "step": {"command": "step", "kind": "in"},
         "finish": {"command": "step", "kind": "out"}}


class SessionError(ValueError):
    """A command that cannot be done now; its message is the one line to show."""


@dataclass
class RankView:
    """What the debugger knows of one chosen rank."""

    rank: int
    link: Link | None = None
    state: str = "connecting"  # waiting (to be started: c) running stopped exited gone refused
    why: str | None = None  # refused or gone: why
    reason: str | None = None  # the stop's reason (breakpoint, step, pause, exception)
    thread: int | None = None
    where: render.Where | None = None
    waiting_in: str | None = None  # shown paused while it waits in a collective
    blocked: str | None = None  # running, blocked in this collective (a group step found)
    stops: int = 0
    local_rank: int | None = None


@dataclass
class Breakpoint:
    number: int
    path: str
    line: int
    ranks: list[int] | None  # bound to these ranks; None: every rank
    condition: str | None

    def dap(self) -> dict[str, Any]:
        """The DAP entry; a binding travels in the condition (``supervise.gate_breaks``)."""
        parts = []
        if self.ranks is not None:
            parts.append(f"ranks {rankspec.compact(self.ranks)}")
        if self.condition:
            parts.append(self.condition if not parts else f"({self.condition})")
        out: dict[str, Any] = {"line": self.line}
        if parts:
            out["condition"] = " and ".join(parts)
        return out


@dataclass
class Flight:
    """A group command whose ranks have not all stopped again."""

    ranks: set[int]
    before: dict[int, int]  # rank -> its stops before the command
    done: set[int] = field(default_factory=set)
    blocked: dict[int, str] = field(default_factory=dict)
    first_at: float | None = None


Say = Callable[[str], None]


class Session:
    """The debugger over one job's chosen ranks (see the module's docstring)."""

    def __init__(self, job: str, job_dir: str, cwd: str, say: Say) -> None:
        self.job, self.job_dir, self.cwd = job, job_dir, cwd
        self.say = say
        self.views: dict[int, RankView] = {}
        self.current: list[int] = []  # empty: every rank held
        self.breaks: list[Breakpoint] = []
        self._known_coords: dict[int, dict[str, int]] = {}
        self._next_break = 1
        self._cond = threading.Condition()
        self._events: queue.Queue[tuple[Link, dict[str, Any]] | None] = queue.Queue()
        self.flight: Flight | None = None
        self.ended: int | None = None  # the job's exit status once it has ended
        self.quitting = False  # the user quits: the ranks' ends are no news
        self.own = False  # started by this debugger (its end is launch's exited event)
        self.run_once = False  # a rank was started (c): ranks that listen later run at once
        self.on_all_gone: Callable[[], None] | None = None
        threading.Thread(target=self._dispatch, name="rankdebug-repl-events",
                         daemon=True).start()

    # --- ranks ------------------------------------------------------------------------

    def add(self, found: list[tuple[int, str, int]], start: bool) -> None:
        """Connect to each ``(rank, host, port)`` gate at once; ``start``: configure too (the
        rank runs, or runs on). A rank whose gate turns us away is shown with why."""
        fresh = [(r, h, p) for r, h, p in found if r not in self.views
                 or self.views[r].state in ("gone", "refused")]
        for rank, _, _ in fresh:
            self.views[rank] = RankView(rank)

        def one(item: tuple[int, str, int]) -> tuple[int, Link | str]:
            rank, host, port = item
            link = Link(rank, host, port, self._on_link)
            with self._cond:
                self.views[rank].link = link  # its events count from its first one
            try:
                link.open()
                self._send_breaks(link, None)
                if start:
                    link.configure()
            except LinkError as exc:
                with self._cond:
                    self.views[rank].link = None  # its closing is no news
                link.close()
                return rank, link.refusal or str(exc)
            return rank, link

        with ThreadPoolExecutor(max_workers=min(32, len(fresh) or 1)) as pool:
            results = list(pool.map(one, fresh))
        entries = self._entries()
        with self._cond:
            for rank, got in results:
                view = self.views[rank]
                view.local_rank = _int(entries.get(rank, {}).get("local_rank"))
                if isinstance(got, str):
                    view.state, view.why = "refused", got.removeprefix("rankdebug: ")
                    continue
                if view.state == "connecting":  # a stop may have come in meanwhile
                    view.state = "running" if got.configured else "waiting"
            self._cond.notify_all()

    def held(self) -> list[int]:
        """Ranks with a debugger connection."""
        return sorted(r for r, v in self.views.items() if v.link is not None
                      and v.state not in ("gone", "exited", "refused"))

    def chosen(self) -> list[int]:
        """The current ranks (all held ranks when none were chosen)."""
        held = self.held()
        return [r for r in self.current if r in held] if self.current else held

    def choose(self, spec: str) -> list[int]:
        """Make ``spec`` (numbers, ranges, ``localN``, ``all`` or a selector) the current
        ranks; raises SessionError."""
        picked = self.resolve(spec)
        self.current = picked
        return picked

    def resolve(self, spec: str) -> list[int]:
        """The held ranks ``spec`` names; raises SessionError."""
        held = self.held()
        try:
            if rankspec.is_selector(spec):
                plain = self._resolve_selector(spec)
            else:
                plain = ",".join(rankspec.items(spec))
            picked = [r for r in held
                      if rankspec.chosen(plain, r, self.views[r].local_rank)]
        except rankspec.RanksError as exc:
            raise SessionError(exc.message) from None
        if not picked:
            raise SessionError(f"{spec!r} names no rank this debugger holds (it holds "
                               f"{rankspec.compact(held) or 'none'})")
        return picked

    def _resolve_selector(self, spec: str) -> str:
        from rankdebug.jobs import job_coords
        from rankdebug.jobs.discover import discover, find_job

        found = discover(gpus=False)
        job = find_job(found.jobs, self.job)
        if job is None:
            raise SessionError(f"job {self.job} is no longer listed")
        try:
            return job_coords.resolve(spec, job, found.host)
        except rankspec.RanksError as exc:
            raise SessionError(exc.message) from None

    def _entries(self) -> dict[int, dict[str, Any]]:
        try:
            job = registry.read_job(self.job) or {}
        except (OSError, registry.RegistryError):
            return {}
        return {int(e["rank"]): e for e in job.get("ranks") or []
                if isinstance(e.get("rank"), int)}

    def _coords(self, entries: dict[int, dict[str, Any]]) -> dict[int, dict[str, int]]:
        """Each held rank's parallel coordinates: its registry entry's, else its handler's
        answer (asked once, all at once, as ``jobs.job_coords`` asks), else none."""
        for rank, entry in entries.items():
            found = valid_coords(entry.get("coords"), entry.get("coord_dims"))
            if found is not None:
                self._known_coords[rank] = found
        asked = [(r, str(e["socket"])) for r, e in entries.items()
                 if r in self.views and r not in self._known_coords
                 and isinstance(e.get("socket"), str) and e.get("state") != "exited"]
        if asked:
            replies = ask_timed([path for _, path in asked], {"command": "coords"},
                                timeout=COORDS_S)
            for (rank, _), (reply, _) in zip(asked, replies, strict=True):
                found = None if isinstance(reply, WireError) else valid_coords(
                    reply.get("coords"))
                if found is not None:
                    self._known_coords[rank] = found
        return self._known_coords

    def rows(self) -> list[render.Row]:
        entries = self._entries()
        known = self._coords(entries)
        picked = set(self.chosen())
        out = []
        for rank, v in sorted(self.views.items()):
            coords = known.get(rank)
            state = "blocked" if v.state == "running" and v.blocked else v.state
            out.append(render.Row(rank, rank in picked, state, v.reason, v.why,
                                  v.waiting_in or v.blocked, coords, v.where))
        return out

    # --- what the links report --------------------------------------------------------

    def _on_link(self, link: Link, event: dict[str, Any]) -> None:
        self._events.put((link, event))

    def _dispatch(self) -> None:
        while True:
            item = self._events.get()
            if item is None:
                return
            link, event = item
            try:
                self._handle(link, event)
            except Exception as exc:  # the prompt outlives any one event
                self.say(f"rank {link.rank}: internal error on its {event.get('event')} "
                         f"event: {type(exc).__name__}: {exc}")

    def _handle(self, link: Link, event: dict[str, Any]) -> None:
        view = self.views.get(link.rank)
        if view is None or view.link is not link:
            return
        name, body = event.get("event"), event.get("body") or {}
        if name == "stopped":
            where, thread = self._locate(link, body)
            description = str(body.get("description") or "")
            with self._cond:
                if view.state == "stopped" and where == view.where and not view.waiting_in:
                    return  # the same stop said again (a pause that found it stopped)
                view.state, view.reason = "stopped", str(body.get("reason") or "pause")
                view.blocked = None
                view.thread, view.where = thread, where
                view.waiting_in = (description.removeprefix("Paused: waiting in ")
                                   if description.startswith("Paused: waiting in ") else None)
                view.stops += 1
                moving = self.flight is not None and link.rank in self.flight.ranks
                self._cond.notify_all()
            if not moving:
                self.say(render.stop_line(link.rank, view.reason, view.waiting_in, where,
                                          self.cwd))
        elif name == "continued":
            # Not acted on: every resume of a held rank is this debugger's own command, marked
            # when sent, and debugpy says "continued" late and only now and then (one that
            # came after the rank's next stop would show it running).
            return
        elif name in ("exited", "terminated", "closed"):
            with self._cond:
                was = view.state
                if was in ("exited", "gone"):
                    return
                code = body.get("exitCode")
                view.state = "exited" if name != "closed" or self._rank_exited(link.rank) \
                    else "gone"
                view.why = f"exit code {code}" if isinstance(code, int) else None
                self._cond.notify_all()
            if self.ended is None and not self.quitting:
                self.say(f"rank {link.rank}: exited" if view.state == "exited" else
                         f"rank {link.rank}: its debugger connection closed")
            if not (self.own or self.quitting or self.held()) and self.ended is None:
                self.job_ended(0)  # attached: nothing left to debug
                self.say("every held rank has ended")
                if self.on_all_gone is not None:
                    self.on_all_gone()

    def _rank_exited(self, rank: int) -> bool:
        """Whether a rank whose connection closed has ended: its registry entry says so or
        its process is gone (the entry is written a moment after the rank's end)."""
        deadline = time.monotonic() + EXIT_SEEN_S
        while True:
            try:
                entry = registry.read_rank(self.job, rank)
            except (OSError, registry.RegistryError):
                return True
            if entry is None or entry.get("state") == "exited":
                return True
            pid = entry.get("pid")
            if isinstance(pid, int) and not _alive(pid):
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)

    def _locate(self, link: Link, body: dict[str, Any]) -> tuple[render.Where | None, int | None]:
        """The thread a stop is shown in (a pause names any thread: the main one) and its
        top frame of user code."""
        thread = body.get("threadId") if isinstance(body.get("threadId"), int) else None
        try:
            if body.get("reason") == "pause" or thread is None:
                thread = main_thread(link.answer(link.send("threads", {}), 10.0), thread)
            frames = link.request("stackTrace", {"threadId": thread, "startFrame": 0,
                                                 "levels": 1}, 10.0).get("stackFrames") or []
        except LinkError:
            return None, thread
        return (render.Where.of(frames[0]) if frames else None), thread

    def job_ended(self, code: int) -> None:
        with self._cond:
            self.ended = code
            self._cond.notify_all()

    # --- group commands ---------------------------------------------------------------

    def go(self, what: str, interrupted: Callable[[], bool]) -> None:
        """``continue``, ``next``, ``step``, ``finish`` or ``pause`` for the current ranks,
        then wait until they have stopped again (or are blocked, or have ended)."""
        group = self.chosen()
        if not group:
            raise SessionError("no rank is held (see `list`)")
        views = [self.views[r] for r in group]
        unstarted = [v.rank for v in views if v.state == "waiting"]
        if unstarted and what != "continue":
            raise SessionError(f"{rankspec.label(unstarted)} not started yet: `c` runs "
                               f"{'them' if len(unstarted) > 1 else 'it'} to a breakpoint")
        if what in ("next", "step", "finish"):
            blocked = [v for v in views if v.state == "stopped" and v.waiting_in]
            for v in blocked:
                self.say(f"rank {v.rank}: blocked in {v.waiting_in}; it steps once its "
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
        with self._cond:
            flight = Flight(set(group), {r: self.views[r].stops for r in group})
            self.flight = flight
        try:
            self._send_group(what, group)
            self._wait(flight, interrupted)
            with self._cond:  # every held rank ended: the job's own end is near, wait for it
                if self.own and not self.held():
                    self._cond.wait_for(lambda: self.ended is not None, JOB_END_S)
        finally:
            with self._cond:
                self.flight = None
        self._summary(flight)

    def _send_group(self, what: str, group: list[int]) -> None:
        starting = [r for r in group if self.views[r].state == "waiting"]
        self.run_once = self.run_once or bool(starting)
        others = [r for r in group if r not in starting
                  and (what == "pause" or self.views[r].state == "stopped")]
        if others:
            # Running from now, before the job answers: its next stop may come first.
            moved = {r: self.views[r].stops for r in others
                     if what != "pause" and self.views[r].state == "stopped"}
            with self._cond:
                for r in moved:
                    self.views[r].state = "running"
            cmd = dict(GROUP[what], ranks=rankspec.compact(others))
            try:
                reply = ask(os.path.join(self.job_dir, "ctl.sock"), cmd, timeout=CTL_S)
            except WireError as exc:
                reply = {"ranks": [], "error": str(exc)}
            acted = reply.get("ranks")
            acted = acted if isinstance(acted, list) else []
            with self._cond:
                assert self.flight is not None
                for r in others:
                    if r in acted:
                        continue
                    self.flight.ranks.discard(r)  # nothing to wait for
                    v = self.views[r]
                    if r in moved and v.state == "running" and v.stops == moved[r]:
                        v.state = "stopped"
                self._cond.notify_all()
            if "error" in reply:
                self.say(f"*** {what}: {_message(reply['error'])}")

        def start(rank: int) -> None:
            link = self.views[rank].link
            assert link is not None
            try:
                link.configure()
            except LinkError as exc:
                self.say(f"rank {rank}: {exc}")
            with self._cond:
                if self.views[rank].state == "waiting":
                    self.views[rank].state = "running"
                self._cond.notify_all()

        with ThreadPoolExecutor(max_workers=min(32, len(starting) or 1)) as pool:
            list(pool.map(start, starting))

    def _wait(self, flight: Flight, interrupted: Callable[[], bool]) -> None:
        read_at = time.monotonic() + 1.0  # the group layer reads a late rank after 1 s
        while True:
            with self._cond:
                for r in flight.ranks - flight.done:
                    v = self.views[r]
                    if (v.state == "stopped" and v.stops > flight.before[r]) or \
                            v.state in ("exited", "gone") or r in flight.blocked:
                        flight.done.add(r)
                        if flight.first_at is None:
                            flight.first_at = time.monotonic()
                left = flight.ranks - flight.done
                if not left or self.ended is not None:
                    return
                if flight.first_at is not None and \
                        time.monotonic() - flight.first_at > SETTLE_S:
                    return
                self._cond.wait(0.2)
            if interrupted():
                return
            if time.monotonic() >= read_at:
                read_at = time.monotonic() + BLOCKED_READ_S
                self._read_blocked(flight, left)

    def _read_blocked(self, flight: Flight, left: set[int]) -> None:
        """A rank the group layer found waiting in a collective (its registry entry)."""
        entries = self._entries()
        with self._cond:
            for r in left:
                entry = entries.get(r, {})
                if entry.get("state") == "blocked" and isinstance(entry.get("collective"), str):
                    seq = entry.get("seq")
                    flight.blocked[r] = entry["collective"] + (f" #{seq}" if isinstance(
                        seq, int) else "")
            self._cond.notify_all()

    def _summary(self, flight: Flight) -> None:
        with self._cond:
            for r, what in flight.blocked.items():
                if self.views[r].state == "running":
                    self.views[r].blocked = what
            views = [self.views[r] for r in sorted(flight.ranks)]
        for line in render.arrivals(views, flight.blocked, self.cwd):
            self.say(line)

    # --- reading the stopped ranks ----------------------------------------------------

    def _stopped(self) -> tuple[list[RankView], list[str]]:
        """The current ranks that are stopped, and a line for each that is not."""
        views = [self.views[r] for r in self.chosen()]
        if not views:
            raise SessionError("no rank is held (see `list`)")
        notes = [f"rank {v.rank}: {render.state_text(v.state, v.reason, v.waiting_in)}"
                 for v in views if v.state != "stopped" or v.link is None]
        return [v for v in views if v.state == "stopped" and v.link is not None], notes

    def stacks(self) -> list[str]:
        stopped, notes = self._stopped()

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
        return render.stacks(got, self.cwd) + notes

    def evaluate(self, expr: str) -> list[str]:
        stopped, notes = self._stopped()

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

    # --- breakpoints ------------------------------------------------------------------

    def add_break(self, text: str) -> list[str]:
        spec = parse_break(text)
        path = self._break_path(spec)
        bound = self.resolve(spec.ranks) if spec.ranks else None
        if any(b.path == path and b.line == spec.line for b in self.breaks):
            raise SessionError(f"{render.short(path, self.cwd)}:{spec.line} has a breakpoint "
                               "already (`clear` it first)")
        bp = Breakpoint(self._next_break, path, spec.line, bound, spec.condition)
        self._next_break += 1
        self.breaks.append(bp)
        answers = self._push(path)
        lines = [render.break_line(bp, self.cwd)]
        for rank, message in answers:
            lines.append(f"  rank {rank}: {message}")
        return lines

    def _break_path(self, spec: BreakSpec) -> str:
        if spec.file is None:
            here = next((self.views[r].where for r in self.chosen()
                         if self.views[r].where is not None), None)
            if here is None or here.file is None:
                raise SessionError("b LINE needs a current rank stopped in a file; give "
                                   "FILE:LINE")
            path = here.file
        else:
            path = os.path.realpath(os.path.join(self.cwd, os.path.expanduser(spec.file)))
        try:
            if not os.path.isfile(path):  # a folder, a device, a pipe: no lines to stop at
                raise SessionError(f"{spec.file or path} is not a file")
            if os.path.getsize(path) > MAX_SOURCE:
                raise SessionError(f"{spec.file or path} is too large for a source file")
            with open(path, "rb") as f:
                count = f.read().count(b"\n") + 1
        except OSError as exc:
            raise SessionError(f"cannot read {spec.file or path}: {exc.strerror or exc}") \
                from None
        if spec.line > count:
            raise SessionError(f"{render.short(path, self.cwd)} has {count} lines; no line "
                               f"{spec.line}")
        return path

    def clear(self, arg: str) -> list[str]:
        if not arg:
            gone = list(self.breaks)
        elif arg.isdigit():
            gone = [b for b in self.breaks if b.number == int(arg)]
        else:
            try:
                spec = parse_break(arg)
            except BadCommand:
                raise SessionError("clear takes a breakpoint number, FILE:LINE, or nothing "
                                   "(all)") from None
            path = self._break_path(spec)
            gone = [b for b in self.breaks if b.path == path and b.line == spec.line]
        if not gone:
            raise SessionError(f"no breakpoint {arg} (info b lists them)" if arg else
                               "no breakpoints to clear")
        self.breaks = [b for b in self.breaks if b not in gone]
        for path in sorted({b.path for b in gone}):
            self._push(path)
        return [f"deleted breakpoint {b.number} at {render.short(b.path, self.cwd)}:{b.line}"
                for b in gone]

    def _push(self, path: str) -> list[tuple[int, str]]:
        """Send ``path``'s breakpoints to every held rank; what a rank said against one."""
        links = [v.link for v in self.views.values()
                 if v.link is not None and v.state not in ("gone", "exited", "refused")]

        def one(link: Link) -> list[tuple[int, str]]:
            return self._send_breaks(link, path)

        with ThreadPoolExecutor(max_workers=min(32, len(links) or 1)) as pool:
            return [said for got in pool.map(one, links) for said in got]

    def _send_breaks(self, link: Link, path: str | None) -> list[tuple[int, str]]:
        """Send ``path``'s breakpoints (None: every file's) to ``link``."""
        paths = [path] if path is not None else sorted({b.path for b in self.breaks})
        said = []
        for p in paths:
            mine = [b for b in self.breaks if b.path == p]
            try:
                body = link.request("setBreakpoints", {"source": {"path": p},
                                                       "breakpoints": [b.dap() for b in mine]})
            except LinkError as exc:
                said.append((link.rank, str(exc)))
                continue
            for b, answer in zip(mine, body.get("breakpoints") or [], strict=False):
                bound_here = b.ranks is None or link.rank in b.ranks
                if bound_here and isinstance(answer, dict) and not answer.get("verified") \
                        and answer.get("message"):
                    said.append((link.rank, f"breakpoint {b.number}: {answer['message']}"))
        return said

    # --- the end ----------------------------------------------------------------------

    def detach(self) -> None:
        links = [v.link for v in self.views.values() if v.link is not None]
        with ThreadPoolExecutor(max_workers=min(32, len(links) or 1)) as pool:
            list(pool.map(lambda link: link.close(), links))
        self._events.put(None)


def _message(error: object) -> str:
    """The text of a control socket's error answer (``{"message": ...}``, or a string)."""
    if isinstance(error, dict):
        return str(error.get("message") or error)
    return str(error)


def _alive(pid: int) -> bool:
    """A process that runs (a zombie, ended but not yet reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[-1].split()[0] != b"Z"
    except (OSError, IndexError):
        return False


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None

"""The terminal debugger's state: one ``Link`` per chosen rank, what each rank is doing
(``views.RankView``), the current ranks; the commands over them are ``group`` (continue,
step, pause: through the job's control socket), ``reading`` (where, p) and ``breaks``.

Events of the links are handled on one thread (``_dispatch``), in order: a ``stopped`` is
located (its top frame) before anyone is told, so a command that waits for its ranks to stop
finds where each stopped as soon as it sees it stopped."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from rankdebug import ranks as rankspec
from rankdebug.jobs.coords_value import valid as valid_coords
from rankdebug.repl import group, reading, render
from rankdebug.repl.breaks import Breakpoint, Breaks
from rankdebug.repl.group import Flight
from rankdebug.repl.link import Link, LinkError
from rankdebug.repl.views import RankView, Say, SessionError
from rankdebug.runtime import registry
from rankdebug.runtime.wire import WireError, ask_timed
from rankdebug.supervise.gates.waiting import main_thread

EXIT_SEEN_S = 1.0  # a closed connection: how long its rank's end may take to show
COORDS_S = 1.0  # a rank's handler answers in milliseconds, even while the rank is stopped


class Session:
    """The debugger over one job's chosen ranks (see the module's docstring)."""

    def __init__(self, job: str, job_dir: str, cwd: str, say: Say) -> None:
        self.job, self.job_dir, self.cwd = job, job_dir, cwd
        self.say = say
        self.views: dict[int, RankView] = {}
        self.current: list[int] = []  # empty: every rank held
        self.breakpoints = Breaks(cwd, self.views, self.chosen, self.resolve)
        self._known_coords: dict[int, dict[str, int]] = {}
        self.cond = threading.Condition()  # guards the views and flags; notified on changes
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
            with self.cond:
                self.views[rank].link = link  # its events count from its first one
            try:
                link.open()
                self.breakpoints.send(link, None)
                if start:
                    link.configure()
            except LinkError as exc:
                with self.cond:
                    self.views[rank].link = None  # its closing is no news
                link.close()
                return rank, link.refusal or str(exc)
            return rank, link

        with ThreadPoolExecutor(max_workers=min(32, len(fresh) or 1)) as pool:
            results = list(pool.map(one, fresh))
        entries = self.entries()
        with self.cond:
            for rank, got in results:
                view = self.views[rank]
                view.local_rank = _int(entries.get(rank, {}).get("local_rank"))
                if isinstance(got, str):
                    view.state, view.why = "refused", got.removeprefix("rankdebug: ")
                    continue
                if view.state == "connecting":  # a stop may have come in meanwhile
                    view.state = "running" if got.configured else "waiting"
            self.cond.notify_all()

    def held(self) -> list[int]:
        """Ranks with a debugger connection."""
        return sorted(r for r, v in self.views.items() if v.live)

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

    def entries(self) -> dict[int, dict[str, Any]]:
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
        entries = self.entries()
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
            with self.cond:
                if view.state == "stopped" and where == view.where and not view.waiting_in:
                    return  # the same stop said again (a pause that found it stopped)
                view.state, view.reason = "stopped", str(body.get("reason") or "pause")
                view.blocked = None
                view.thread, view.where = thread, where
                view.waiting_in = (description.removeprefix("Paused: waiting in ")
                                   if description.startswith("Paused: waiting in ") else None)
                view.stops += 1
                moving = self.flight is not None and link.rank in self.flight.ranks
                self.cond.notify_all()
            if not moving:
                self.say(render.stop_line(link.rank, view.reason, view.waiting_in, where,
                                          self.cwd))
        elif name == "continued":
            # Not acted on: every resume of a held rank is this debugger's own command, marked
            # when sent, and debugpy says "continued" late and only now and then (one that
            # came after the rank's next stop would show it running).
            return
        elif name in ("exited", "terminated", "closed"):
            with self.cond:
                was = view.state
                if was in ("exited", "gone"):
                    return
                code = body.get("exitCode")
                view.state = "exited" if name != "closed" or _rank_exited(self.job, link.rank) \
                    else "gone"
                view.why = f"exit code {code}" if isinstance(code, int) else None
                self.cond.notify_all()
            if self.ended is None and not self.quitting:
                self.say(f"rank {link.rank}: exited" if view.state == "exited" else
                         f"rank {link.rank}: its debugger connection closed")
            if not (self.own or self.quitting or self.held()) and self.ended is None:
                self.job_ended(0)  # attached: nothing left to debug
                self.say("every held rank has ended")
                if self.on_all_gone is not None:
                    self.on_all_gone()

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
        """The job has ended: a held rank whose own end its debugger has not said yet (the
        job's end can come first) has ended with it, and is said so, one line each."""
        with self.cond:
            left = [r for r, v in sorted(self.views.items())
                    if v.link is not None and v.state not in ("exited", "gone", "refused")]
            for rank in left:
                self.views[rank].state = "exited"
            self.ended = code
            self.cond.notify_all()
        if not self.quitting:
            for rank in left:
                self.say(f"rank {rank}: exited")

    # --- commands (``group``, ``reading``, ``breaks``) -------------------------------

    def go(self, what: str, interrupted: Callable[[], bool]) -> None:
        """``continue``, ``next``, ``step``, ``finish`` or ``pause`` for the current ranks,
        then wait until they have stopped again (or are blocked, or have ended)."""
        group.go(self, what, interrupted)

    def stacks(self) -> list[str]:
        return reading.stacks([self.views[r] for r in self.chosen()], self.cwd)

    def evaluate(self, expr: str) -> list[str]:
        return reading.evaluate([self.views[r] for r in self.chosen()], expr)

    @property
    def breaks(self) -> list[Breakpoint]:
        return self.breakpoints.items

    def add_break(self, text: str) -> list[str]:
        return self.breakpoints.add(text)

    def clear(self, arg: str) -> list[str]:
        return self.breakpoints.clear(arg)

    # --- the end ----------------------------------------------------------------------

    def detach(self) -> None:
        links = [v.link for v in self.views.values() if v.link is not None]
        with ThreadPoolExecutor(max_workers=min(32, len(links) or 1)) as pool:
            list(pool.map(lambda link: link.close(), links))
        self._events.put(None)


def _rank_exited(job: str, rank: int) -> bool:
    """Whether a rank whose connection closed has ended: its registry entry says so or
    its process is gone (the entry is written a moment after the rank's end)."""
    deadline = time.monotonic() + EXIT_SEEN_S
    while True:
        try:
            entry = registry.read_rank(job, rank)
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


def _alive(pid: int) -> bool:
    """A process that runs (a zombie, ended but not yet reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[-1].split()[0] != b"Z"
    except (OSError, IndexError):
        return False


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None

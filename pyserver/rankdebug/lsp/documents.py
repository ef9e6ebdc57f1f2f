"""Open documents and their newest analysis; only the newest version is worth work.

Each change bumps the document's ``seq``. The runner copies the document (a
:class:`Snapshot`) on the event loop, analyses it in the thread pool, and, if more changes
came meanwhile, goes on with the newest text: versions typed in between are never
analysed. A change nobody asks about yet waits for a quiet moment first (``DEBOUNCE_S``
without another change, ``MAX_DELAY_S`` at most), so a burst of edits (a paste, a
formatter, a macro, hundreds a second) costs one analysis, not one per version that
happened to be current when the last one finished. Requests (code lenses, hover) never
wait for the quiet moment: they start the analysis at once and wait for one at least as
new as the document was when they arrived; code lenses are handed over as soon as the
analysis has made them, before it goes on to the diagnostics. A document just opened is
analysed at once.

When no document has had anything to do for ``IDLE_S``, ``on_idle`` runs (the server
collects garbage and returns memory then); also after ``IDLE_EVERY`` analyses without an
idle moment.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import posixpath
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from rankdebug.command.source import MARKDOWN_SUFFIXES
from rankdebug.lsp.analysis import Analysis, PlannerSlot, Snapshot, analyze
from rankdebug.lsp.lenses import Lenses

T = TypeVar("T")

SHELL_LANGUAGES = frozenset({"shellscript", "sh", "bash", "zsh", "shell", "slurm", "sbatch"})
MARKDOWN_LANGUAGES = frozenset({"markdown", "md", "mdx"})
SHELL_SUFFIXES = (".sh", ".bash", ".zsh", ".slurm", ".sbatch", ".job")
WAIT_SECONDS = 20.0
DEBOUNCE_S = 0.05
MAX_DELAY_S = 0.5
IDLE_S = 1.0
IDLE_EVERY = 100
IDLE_SOON_S = 0.1


def language_of(language_id: str | None, path: str | None) -> str | None:
    """"shell", "markdown", or None for documents the server leaves alone."""
    lang = (language_id or "").lower()
    if lang in SHELL_LANGUAGES:
        return "shell"
    if lang in MARKDOWN_LANGUAGES:
        return "markdown"
    name = posixpath.basename((path or "").replace("\\", "/")).lower()
    if name.endswith(SHELL_SUFFIXES):
        return "shell"
    if name.endswith(MARKDOWN_SUFFIXES):
        return "markdown"
    return None


@dataclass
class _State:
    seq: int = 0
    latest: Analysis | None = None
    runner: asyncio.Task[None] | None = None
    waiters: list[tuple[int, asyncio.Future[Analysis]]] = field(default_factory=list)
    closed: bool = False
    # The next analysis must run even if the text is unchanged (saved: files around it
    # may have changed; settings: they are part of the snapshot anyway).
    force: bool = False
    planner: PlannerSlot = field(default_factory=PlannerSlot)
    # A debounced start, and the loop time of the first change it waits to analyse.
    timer: asyncio.TimerHandle | None = None
    pending_since: float | None = None
    # The newest lenses handed over before their analysis was done: (seq, lenses).
    early: tuple[int, Lenses] | None = None
    lens_waiters: list[tuple[int, asyncio.Future[Lenses]]] = field(default_factory=list)

    def running(self) -> bool:
        return self.runner is not None and not self.runner.done()

    def stop_timer(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.timer, self.pending_since = None, None


SnapshotFn = Callable[[str, int, PlannerSlot], "Snapshot | None"]


class Documents:
    """Schedules analyses; calls ``on_result`` (on the loop) with each newest analysis."""

    def __init__(
        self,
        executor: Executor,
        snapshot: SnapshotFn,
        on_result: Callable[[Analysis], None],
        on_failure: Callable[[str, str], None],
        on_idle: Callable[[], None] | None = None,
    ) -> None:
        self._executor = executor
        self._snapshot = snapshot
        self._on_result = on_result
        self._on_failure = on_failure
        self._on_idle = on_idle
        self._states: dict[str, _State] = {}
        self._idle_timer: asyncio.TimerHandle | None = None  # when nothing happens
        self._soon: asyncio.TimerHandle | None = None  # after IDLE_EVERY analyses
        self._since_idle = 0  # analyses since on_idle last ran

    def tracked(self, uri: str) -> bool:
        return uri in self._states

    def uris(self) -> list[str]:
        return list(self._states)

    def changed(self, uri: str, *, force: bool = False) -> None:
        """The document was opened or changed (or saved, or settings changed): analyse anew.
        Unless ``force``, a text identical to the last analysed one reuses that analysis."""
        state = self._states.get(uri)
        if state is None:
            state = self._states[uri] = _State()
        state.seq += 1
        state.force = state.force or force
        if state.running():
            return  # it goes on with the newest text when done
        if state.latest is None and state.seq == 1:
            self._start(uri, state)  # just opened: nothing to coalesce
        else:
            self._debounce(uri, state)

    def closed(self, uri: str) -> None:
        state = self._states.pop(uri, None)
        if state is None:
            return
        state.closed = True
        state.stop_timer()
        futures: list[asyncio.Future[Any]] = [f for _, f in state.waiters]
        futures += [f for _, f in state.lens_waiters]
        for fut in futures:
            if not fut.done():
                fut.cancel()
        state.waiters.clear()
        state.lens_waiters.clear()
        self._maybe_idle()

    def _debounce(self, uri: str, state: _State) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        since = state.pending_since if state.pending_since is not None else now
        delay = min(DEBOUNCE_S, max(0.0, since + MAX_DELAY_S - now))
        state.stop_timer()
        state.pending_since = since
        state.timer = loop.call_later(delay, self._start, uri, state)

    def _start(self, uri: str, state: _State) -> None:
        state.stop_timer()
        if state.closed or state.running():
            return
        state.runner = asyncio.get_running_loop().create_task(self._run(uri, state))

    def latest(self, uri: str) -> Analysis | None:
        state = self._states.get(uri)
        return state.latest if state else None

    async def current(self, uri: str, timeout: float = WAIT_SECONDS) -> Analysis | None:
        """The analysis of the document as it is now (waiting for it if need be)."""
        state = self._states.get(uri)
        if state is None:
            return None
        want = state.seq
        if state.latest is not None and state.latest.snapshot.seq >= want:
            return state.latest
        # Slower than the client should wait: the newest there is.
        return await self._wait(uri, state, state.waiters, timeout, lambda: state.latest)

    async def current_lenses(self, uri: str, timeout: float = WAIT_SECONDS) -> Lenses | None:
        """The code lenses of the document as it is now: from the analysis that makes them,
        without waiting for its diagnostics."""
        state = self._states.get(uri)
        if state is None:
            return None
        want = state.seq
        ready = _lenses_since(state, want)
        if ready is not None:
            return ready
        return await self._wait(uri, state, state.lens_waiters, timeout,
                                lambda: _lenses_since(state, 0))

    async def _wait(self, uri: str, state: _State, waiters: list[tuple[int, asyncio.Future[T]]],
                    timeout: float, newest: Callable[[], T | None]) -> T | None:
        """Wait in ``waiters`` for the document's version now (``newest()`` after
        ``timeout``)."""
        want = state.seq
        fut: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        waiters.append((want, fut))
        if state.timer is not None:
            self._start(uri, state)  # asked for: no more waiting for a quiet moment
        try:
            return await asyncio.wait_for(fut, timeout)
        except asyncio.TimeoutError:
            return newest()
        except asyncio.CancelledError:
            if state.closed and not _cancelling():
                return None
            raise
        finally:
            with contextlib.suppress(ValueError):
                waiters.remove((want, fut))

    async def _run(self, uri: str, state: _State) -> None:
        done = 0
        while not state.closed and done < state.seq:
            seq = state.seq
            snap = self._snapshot(uri, seq, state.planner)
            if snap is None:
                return
            result = await self._analyse(uri, state, snap)
            if result is None:
                return
            done = seq
            if state.closed:
                return
            self._report_failures(uri, state, result)
            self._deliver(state, seq, result)
            if self._since_idle >= IDLE_EVERY and self._soon is None:
                # Busy for long: the housekeeping cannot wait for a pause, but it can wait
                # until this analysis has been answered.
                self._soon = asyncio.get_running_loop().call_later(IDLE_SOON_S, self._idle)
            if done < state.seq and not any(
                    want > done for want, _ in [*state.waiters, *state.lens_waiters]):
                # Changed meanwhile and nobody waits: let a burst of edits settle first.
                self._debounce(uri, state)
                return
        self._maybe_idle()

    def _busy(self) -> bool:
        return any(s.running() or s.timer is not None for s in self._states.values())

    def _maybe_idle(self) -> None:
        """Arm the idle callback: it runs if nothing happens for IDLE_S."""
        if self._on_idle is None:
            return
        if self._idle_timer is not None:
            self._idle_timer.cancel()
        self._idle_timer = asyncio.get_running_loop().call_later(IDLE_S, self._when_idle)

    def _when_idle(self) -> None:
        self._idle_timer = None
        if not self._busy():
            self._idle()

    def _idle(self) -> None:
        for timer in (self._idle_timer, self._soon):
            if timer is not None:
                timer.cancel()
        self._idle_timer = self._soon = None
        self._since_idle = 0
        if self._on_idle is not None:
            self._on_idle()

    async def _analyse(self, uri: str, state: _State, snap: Snapshot) -> Analysis | None:
        """The analysis of ``snap`` (the previous one when only the version changed)."""
        prev = state.latest
        if (not state.force and prev is not None and prev.failure is None
                and prev.snapshot.text == snap.text
                and prev.snapshot.settings == snap.settings
                and prev.snapshot.language == snap.language):
            return dataclasses.replace(prev, snapshot=snap)  # e.g. an undone edit
        state.force = False
        self._since_idle += 1
        loop = asyncio.get_running_loop()

        def early(lenses: Lenses) -> None:  # (in the pool's thread)
            loop.call_soon_threadsafe(self._early, state, snap.seq, lenses)

        try:
            return await loop.run_in_executor(self._executor, analyze, snap, early)
        except Exception as exc:  # the pool is shut down, or worse
            self._on_failure(uri, f"analysis of {uri} failed: {exc!r}")
            return None

    def _report_failures(self, uri: str, state: _State, result: Analysis) -> None:
        if result.failure:
            self._on_failure(uri, f"analysis of {uri} failed:\n{result.failure}")
        if state.planner.failure:
            self._on_failure(uri, f"incremental planning of {uri} failed; planning whole "
                             f"documents from now on:\n{state.planner.failure}")
            state.planner.failure = None

    def _deliver(self, state: _State, seq: int, result: Analysis) -> None:
        """Make ``result`` the latest, wake the waiters it satisfies, publish if newest."""
        if state.latest is None or state.latest.snapshot.seq <= seq:
            state.latest = result
        _wake(state.waiters, seq, result)
        _wake(state.lens_waiters, seq, result.lenses)
        if state.seq == seq:
            self._on_result(result)

    def _early(self, state: _State, seq: int, lenses: Lenses) -> None:
        if state.closed:
            return
        if state.early is None or state.early[0] <= seq:
            state.early = (seq, lenses)
        _wake(state.lens_waiters, seq, lenses)


def _wake(waiters: list[tuple[int, asyncio.Future[T]]], seq: int, value: T) -> None:
    """Give ``value`` (of version ``seq``) to the waiters it satisfies; keep the others
    (in place: a waiting ``_wait`` removes its own entry from this very list)."""
    keep = []
    for want, fut in waiters:
        if fut.done():
            continue
        if want <= seq:
            fut.set_result(value)
        else:
            keep.append((want, fut))
    waiters[:] = keep


def _lenses_since(state: _State, want: int) -> Lenses | None:
    """The newest lenses there are, if of version ``want`` or newer."""
    seq, lenses = state.early if state.early is not None else (-1, None)
    if state.latest is not None and state.latest.snapshot.seq > seq:
        seq, lenses = state.latest.snapshot.seq, state.latest.lenses
    return lenses if lenses is not None and seq >= want else None


def _cancelling() -> bool:
    task = asyncio.current_task()
    return bool(task is not None and task.cancelling())

"""Open documents and their newest analysis; only the newest version is worth work.

Each change bumps the document's ``seq`` and makes sure one runner task is going for
it. The runner copies the document (a :class:`Snapshot`) on the event loop, analyses it
in the thread pool, and, if more changes came meanwhile, starts over with the newest
text: versions typed in between are never analysed. Requests (code lenses, hover) wait
for an analysis at least as new as the document was when they arrived.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import posixpath
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field

from rankdebug.command.source import MARKDOWN_SUFFIXES
from rankdebug.lsp.analysis import Analysis, PlannerSlot, Snapshot, analyze

SHELL_LANGUAGES = frozenset({"shellscript", "sh", "bash", "zsh", "shell", "slurm", "sbatch"})
MARKDOWN_LANGUAGES = frozenset({"markdown", "md", "mdx"})
SHELL_SUFFIXES = (".sh", ".bash", ".zsh", ".slurm", ".sbatch", ".job")
WAIT_SECONDS = 20.0


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


SnapshotFn = Callable[[str, int, PlannerSlot], "Snapshot | None"]


class Documents:
    """Schedules analyses; calls ``on_result`` (on the loop) with each newest analysis."""

    def __init__(
        self,
        executor: Executor,
        snapshot: SnapshotFn,
        on_result: Callable[[Analysis], None],
        on_failure: Callable[[str, str], None],
    ) -> None:
        self._executor = executor
        self._snapshot = snapshot
        self._on_result = on_result
        self._on_failure = on_failure
        self._states: dict[str, _State] = {}

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
        if state.runner is None or state.runner.done():
            state.runner = asyncio.get_running_loop().create_task(self._run(uri, state))

    def closed(self, uri: str) -> None:
        state = self._states.pop(uri, None)
        if state is None:
            return
        state.closed = True
        for _, fut in state.waiters:
            if not fut.done():
                fut.cancel()
        state.waiters.clear()

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
        fut: asyncio.Future[Analysis] = asyncio.get_running_loop().create_future()
        state.waiters.append((want, fut))
        try:
            return await asyncio.wait_for(fut, timeout)
        except asyncio.TimeoutError:
            return state.latest  # slower than the client should wait: the newest there is
        except asyncio.CancelledError:
            if state.closed and not _cancelling():
                return None
            raise
        finally:
            with contextlib.suppress(ValueError):
                state.waiters.remove((want, fut))

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

    async def _analyse(self, uri: str, state: _State, snap: Snapshot) -> Analysis | None:
        """The analysis of ``snap`` (the previous one when only the version changed)."""
        prev = state.latest
        if (not state.force and prev is not None and prev.failure is None
                and prev.snapshot.text == snap.text
                and prev.snapshot.settings == snap.settings
                and prev.snapshot.language == snap.language):
            return dataclasses.replace(prev, snapshot=snap)  # e.g. an undone edit
        state.force = False
        try:
            return await asyncio.get_running_loop().run_in_executor(self._executor, analyze,
                                                                    snap)
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
        keep: list[tuple[int, asyncio.Future[Analysis]]] = []
        for want, fut in state.waiters:
            if fut.done():
                continue
            if want <= seq:
                fut.set_result(result)
            else:
                keep.append((want, fut))
        state.waiters = keep
        if state.seq == seq:
            self._on_result(result)


def _cancelling() -> bool:
    task = asyncio.current_task()
    return bool(task is not None and task.cancelling())

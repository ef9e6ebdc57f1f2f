"""How the group layer reads a rank that was asked to pause and has not stopped yet: a read
that caught no frame of the main thread (py-spy reads a running process without stopping
it, so a read may land while the stack changes) shows nothing and reads again, so no client
is told the rank is paused at no place (CI: ``stopped`` with ``file: null``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from rankdebug import pyspy
from rankdebug.supervise import together as together_mod
from rankdebug.supervise.together import Together


class _Job:
    job_dir = "/nonexistent"

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.posted: list[Callable[[], None]] = []

    def emit_job(self, event: dict[str, Any]) -> None:
        self.events.append(event)

    def post(self, fn: Callable[[], None]) -> None:
        self.posted.append(fn)

    def pause_untraced(self, rank: int) -> bool:
        return False

    def pid_of(self, rank: int) -> int | None:
        return 4242

    def record(self, rank: int, fields: dict[str, Any]) -> None:
        pass


def _thread(frames: list[pyspy.Frame]) -> pyspy.Thread:
    return pyspy.Thread(name="MainThread", thread_id=1, os_thread_id=4242, main=True,
                        active=False, owns_gil=False, frames=frames)


@pytest.mark.parametrize("threads", [[], [_thread([])]], ids=["no thread", "no frame"])
def test_a_read_with_no_frame_shows_nothing_and_reads_again(
        monkeypatch: pytest.MonkeyPatch, threads: list[pyspy.Thread]) -> None:
    monkeypatch.setattr(pyspy, "dump", lambda pid, **kw: threads)
    job = _Job()
    group = Together({}, job)
    state = group.rank(2)
    state.pausing, state.reads = True, 1
    again: list[int] = []
    monkeypatch.setattr(group.late, "read_again", again.append)
    group.late.read_stack(2, 4242)
    for fn in job.posted:
        fn()
    assert again == [2]
    assert job.events == []


def test_a_read_with_frames_still_reads_the_collective(monkeypatch: pytest.MonkeyPatch) -> None:
    frames = [pyspy.Frame("wait_for_peers", "/w/train.py", 31)]
    monkeypatch.setattr(pyspy, "dump", lambda pid, **kw: [_thread(frames)])
    job = _Job()
    group = Together({}, job)
    group.rank(2).pausing = True
    asked: list[int] = []
    monkeypatch.setattr(group.late, "ask_collective",
                        lambda rank, timeout: asked.append(rank) or None)
    group.late.read_stack(2, 4242)
    assert asked == [2]  # went on to name what it waits in
    assert together_mod.ACTIVE_READS > 1

"""Attach many ranks at once: each on a thread of its own, a bounded number at a time.

Attaching one rank is mostly waiting: for its main thread to reach a point where code can
run, then for debugpy to start inside it and its adapter to listen. Ranks wait side by side;
one after another, N ranks cost N waits. Each attach runs whole on one thread (ptrace answers
only the thread that seized the process), and each rank's failure is its own: the others
are still attached.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Generic, TypeVar

from rankdebug.jobs import attach as att

T = TypeVar("T")
R = TypeVar("R")


def default_workers() -> int:
    """Attaches in flight at once: twice the CPUs (each is mostly a wait)."""
    return 2 * (os.cpu_count() or 1)


@dataclass
class Outcome(Generic[T, R]):
    item: T
    started: float  # time.monotonic() when its attach began, and ended
    ended: float
    result: R | None = None
    error: Exception | None = None


def run_all(items: Sequence[T], one: Callable[[T], R], workers: int | None = None,
            on_done: Callable[[Outcome[T, R]], None] | None = None) -> list[Outcome[T, R]]:
    """``one(item)`` for every item, ``workers`` at a time (default ``default_workers``);
    an Exception it raises is that item's outcome. ``on_done`` is told of each as it ends,
    one at a time. Outcomes come back in the order of ``items``."""
    if not items:
        return []
    told = threading.Lock()

    def run(item: T) -> Outcome[T, R]:
        started = time.monotonic()
        try:
            done: Outcome[T, R] = Outcome(item, started, 0.0, result=one(item))
        except Exception as exc:  # one rank's failure, never the others'
            done = Outcome(item, started, 0.0, error=exc)
        done.ended = time.monotonic()
        if on_done is not None:
            with told:
                on_done(done)
        return done

    count = max(1, min(len(items), workers or default_workers()))
    if count == 1:
        return [run(item) for item in items]
    with ThreadPoolExecutor(max_workers=count, thread_name_prefix="attach") as pool:
        return list(pool.map(run, items))


def attach_pids(pids: Sequence[int], host: str = "127.0.0.1",
                timeout: float = att.INJECT_TIMEOUT_S, workers: int | None = None
                ) -> list[Outcome[int, att.Attached]]:
    """Make every process of ``pids`` listen for a debugger (``attach.attach``), at once."""
    return run_all(pids, lambda pid: att.attach(pid, host, 0, timeout), workers)

"""What a rank's main thread did between two looks, from the kernel's own counters: the time
it ran (``/proc/PID/task/TID/schedstat``, nanoseconds) and how often it went to sleep
(``voluntary_ctxt_switches``). Reading them touches nothing in the rank.

A py-spy read stops the rank for a moment (ptrace), which itself wakes a blocked thread, so
only the time between reads counts for a rank read that way; a rank that answers through
its handler is read by another thread and counts all along. A thread blocked in one call for
the whole time shows no wake and no run time; one spinning in Python runs all the time.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from rankdebug.jobs import procfs

BUSY = 0.5  # of the time watched on a CPU or ready for one: busy
IDLE = 0.02  # at most this much (and no wake): blocked
_WAKES = re.compile(rb"^voluntary_ctxt_switches:\s*(\d+)", re.MULTILINE)


@dataclass(frozen=True)
class Counters:
    at: float  # time.monotonic() of the look
    run_ns: int
    ready_ns: int  # runnable, waiting for a CPU
    wakes: int


def look(pid: int, at: float) -> Counters | None:
    """The main thread's counters now; None when the process is gone."""
    sched = procfs.read_head(f"/proc/{pid}/task/{pid}/schedstat", 256)
    status = procfs.read_head(f"/proc/{pid}/task/{pid}/status", 8192)
    if not sched or not status:
        return None
    found = _WAKES.search(status)
    try:
        fields = sched.split()
        return Counters(at, int(fields[0]), int(fields[1]), int(found.group(1)) if found else 0)
    except (IndexError, ValueError):
        return None


@dataclass(frozen=True)
class Activity:
    """The main thread over the time measured (``seconds``): CPU seconds it ran, seconds it
    was ready to run but waited for a CPU, and the times it went to sleep."""

    seconds: float
    ran: float
    ready: float
    wakes: int

    @property
    def cpu(self) -> float:
        """Percent of one core."""
        return round(100.0 * self.ran / self.seconds, 1) if self.seconds > 0 else 0.0

    @property
    def busy(self) -> bool:
        return self.seconds > 0 and self.ran + self.ready >= BUSY * self.seconds

    @property
    def blocked(self) -> bool:
        """Never woke and hardly ran: blocked in one call all along."""
        return self.seconds > 0 and self.wakes == 0 and self.ran <= IDLE * self.seconds

    def manner(self) -> str:
        return "busy" if self.busy else "blocked" if self.blocked else "waking"


def measure(spans: Iterable[tuple[Counters | None, Counters | None]]) -> Activity | None:
    """The sum over ``(start, end)`` spans with both looks; None when none has."""
    seconds = ran = ready = 0.0
    wakes = 0
    counted = False
    for start, end in spans:
        if start is None or end is None or end.at <= start.at:
            continue
        counted = True
        seconds += end.at - start.at
        ran += max(0, end.run_ns - start.run_ns) / 1e9
        ready += max(0, end.ready_ns - start.ready_ns) / 1e9
        wakes += max(0, end.wakes - start.wakes)
    return Activity(round(seconds, 3), ran, ready, wakes) if counted else None

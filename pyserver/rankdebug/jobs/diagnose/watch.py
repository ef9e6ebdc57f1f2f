"""Every rank read a few times, a moment apart: the stacks (``jobs.analysis.stacks.take``: armed
ranks through their handlers, the others through py-spy, all at once) and, just before and
just after each read, the main threads' kernel counters (``activity``).

Reads are ``interval`` apart from the end of one to the start of the next, so that a rank
read by py-spy has that much untouched time between reads to show what it does on its own.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from rankdebug.jobs.analysis import stacks as stk
from rankdebug.jobs.diagnose.activity import Activity, Counters, look, measure
from rankdebug.runtime import procstat

Target = tuple[int, int | None, str | None]  # (pid, rank, host), as stacks.take takes them


@dataclass
class Read:
    stacks: dict[int, stk.RankStack]  # pid -> what this read gave
    before: dict[int, Counters | None] = field(default_factory=dict)
    after: dict[int, Counters | None] = field(default_factory=dict)


@dataclass
class Watch:
    reads: list[Read]
    seconds: float  # from the first read's start to the last one's end

    def of(self, pid: int) -> list[stk.RankStack]:
        return [r.stacks[pid] for r in self.reads if pid in r.stacks]

    def activity(self, pid: int) -> Activity | None:
        """The main thread between the reads, and during those its handler answered."""
        spans: list[tuple[Counters | None, Counters | None]] = []
        for i, read in enumerate(self.reads):
            if i:
                spans.append((self.reads[i - 1].after.get(pid), read.before.get(pid)))
            rs = read.stacks.get(pid)
            if rs is not None and rs.via == "handler" and rs.error is None:
                spans.append((read.before.get(pid), read.after.get(pid)))
        return measure(spans)


MAX_READS = 100
SETTLE_S = 0.1  # at most, per read, for the ranks py-spy stopped to block again


def _settle(pids: list[int]) -> None:
    """Wait (briefly) until each main thread py-spy stopped has gone back to sleep: resumed,
    a blocked thread restarts its system call and sleeps again, a wake that is py-spy's, not
    the rank's, and must fall before the next look (one still running after ``SETTLE_S``, a
    spinning one, is left as it is)."""
    deadline = time.monotonic() + SETTLE_S
    left = list(pids)
    while left and time.monotonic() < deadline:
        left = [pid for pid in left if _state(pid) in (b"R", b"t", b"T")]
        if left:
            time.sleep(0.002)


def _state(pid: int) -> bytes | None:
    found = procstat.fields(f"/proc/{pid}/task/{pid}/stat")
    return found[procstat.STATE] if found else None


def watch(targets: list[Target], sockets: dict[int, str], *, interval: float, timeout: float,
          enough: Callable[[Watch], bool]) -> Watch:
    """Reads of every target, ``interval`` seconds apart, until ``enough(watch so far)``
    (asked from the second read on) says more could change nothing."""
    reads: list[Read] = []
    t0 = time.monotonic()
    pids = [pid for pid, _, _ in targets]
    out = Watch(reads, 0.0)
    for i in range(MAX_READS):
        if i:
            time.sleep(interval)
        now = time.monotonic()
        before = {pid: look(pid, now) for pid in pids}
        taken = stk.take(targets, timeout=timeout, sockets=sockets)
        _settle([rs.pid for rs in taken if rs.via == "py-spy"])
        now = time.monotonic()
        after = {pid: look(pid, now) for pid in pids}
        reads.append(Read({rs.pid: rs for rs in taken}, before, after))
        out.seconds = round(time.monotonic() - t0, 3)
        if i and enough(out):
            break
    return out

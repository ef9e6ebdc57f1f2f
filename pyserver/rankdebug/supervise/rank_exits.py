"""The order in which a job's ranks end, to the millisecond: once one rank fails, the
launcher stops all the others, and the user should hear of the rank that ended first, not
of the one that was stopped.

Each rank process (found by the supervisor's scan, ``procs.rank_pids``) gets a pidfd
(Linux 5.3+); one thread polls them and records each end with its time. Not the exit
status: ranks are the launcher's children, not ours (the launcher's own message has it).
"""

from __future__ import annotations

import os
import queue
import select
import threading
import time
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Ended:
    at: float  # time.monotonic()
    rank: int
    pid: int


class RankExits:
    """Watches rank processes; ``ended`` lists them in the order they ended."""

    def __init__(self) -> None:
        self.ended: list[Ended] = []
        self._watched: set[int] = set()
        self._new: queue.SimpleQueue[tuple[int, int, int]] = queue.SimpleQueue()
        self._wake_r, self._wake_w = os.pipe()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="rankdebug-rank-exits",
                                        daemon=True)
        self._thread.start()

    def watch(self, pids: dict[int, int]) -> None:
        """Watch these rank processes (pid -> rank) from now on; known ones are skipped."""
        added = False
        for pid, rank in pids.items():
            if pid in self._watched or self._closed:
                continue
            self._watched.add(pid)
            try:
                fd = os.pidfd_open(pid)
            except (OSError, AttributeError):  # gone already, or no pidfds here
                continue
            self._new.put((fd, pid, rank))
            added = True
        if added:
            os.write(self._wake_w, b"+")

    def first_before(self, rank: int) -> Ended | None:
        """The first rank other than ``rank`` to end, if one ended before ``rank`` did (or
        before now, when ``rank`` has not been seen to end)."""
        mine = next((e.at for e in self.ended if e.rank == rank), None)
        for e in list(self.ended):
            if e.rank != rank and (mine is None or e.at < mine):
                return e
        return None

    def first(self) -> Ended | None:
        return self.ended[0] if self.ended else None

    def close(self) -> None:
        self._closed = True
        os.write(self._wake_w, b"x")
        self._thread.join(timeout=1.0)

    def _run(self) -> None:
        # Only this thread touches the poll object and the pidfds.
        poll = select.poll()
        poll.register(self._wake_r, select.POLLIN)
        fds: dict[int, tuple[int, int]] = {}
        try:
            while not self._closed:
                while not self._new.empty():
                    fd, pid, rank = self._new.get()
                    fds[fd] = (pid, rank)
                    poll.register(fd, select.POLLIN)
                for fd, _ in poll.poll():
                    if fd == self._wake_r:
                        os.read(self._wake_r, 4096)
                        continue
                    pid, rank = fds.pop(fd)
                    poll.unregister(fd)
                    os.close(fd)
                    self.ended.append(Ended(time.monotonic(), rank, pid))
        finally:
            for fd in fds:
                os.close(fd)
            os.close(self._wake_r)
            os.close(self._wake_w)

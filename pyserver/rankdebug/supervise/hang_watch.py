"""The hang watch of a job ``rankdebug launch`` started (``--hang-seconds S``, 0: off).

Its signal of progress: a thread of the supervisor's reads, every ``tick_of(S)`` seconds
(S/10, 0.5 to 2 s), how far each rank with a handler socket in the job's folder (chosen and
armed ranks) has got in its process groups' collectives: the ``collectives`` command,
answered from the rank's handler thread in a millisecond, the main thread untouched. Any
change, a new rank included, is progress and restarts the clock. What happens when the clock
passes S (the diagnosis, and what it decides) is the rule every watch shares:
``rankdebug.hang_rule``. Where no rank has a handler that counts collectives, progress after
a hang is looked for by a diagnosis again every S seconds.

The user's own holds are no hang: while ``held()`` (a chosen rank stopped or being paused in
the debugger, waiting for its client, or a rank held at an uncaught exception), the clock
does not run, and no diagnosis reads the ranks.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from collections.abc import Callable, Hashable
from typing import Any

from rankdebug.hang_rule import Diagnosis, HangRule, diagnose, tick_of
from rankdebug.runtime import wire

ASK_S = 2.0  # a handler answers in milliseconds, even while its main thread waits
_SOCKET = re.compile(r"rank-(\d+)\.sock")

# Where they were before the rule was shared: the supervisor's callers import them here.
__all__ = ["Diagnosis", "HangWatch", "diagnose", "progress_marks", "tick_of"]


def _signature(state: Any) -> Hashable:
    """How far a rank has got: each group's issued and done numbers, and the collective it
    waits in (None: torch.distributed not initialised, or no answer)."""
    if not isinstance(state, dict):
        return None
    groups = state.get("groups")
    issued = tuple(sorted((str(name), info.get("issued"), info.get("done"))
                          for name, info in groups.items() if isinstance(info, dict))
                   ) if isinstance(groups, dict) else ()
    current = state.get("current")
    here = ((current.get("op"), current.get("seq"), current.get("group"))
            if isinstance(current, dict) else None)
    return (issued, here)


def progress_marks(job_dir: str) -> dict[int, Hashable]:
    """rank -> how far it has got, for every rank with a handler socket in ``job_dir``."""
    try:
        names = os.listdir(job_dir)
    except OSError:
        return {}
    ranks = sorted(int(m.group(1)) for m in map(_SOCKET.fullmatch, names) if m)
    paths = [os.path.join(job_dir, f"rank-{r}.sock") for r in ranks]
    out: dict[int, Hashable] = {}
    for rank, (reply, _s) in zip(ranks, wire.ask_timed(paths, {"command": "collectives"},
                                                        timeout=ASK_S), strict=True):
        out[rank] = None if isinstance(reply, wire.WireError) else \
            _signature(reply.get("collectives"))
    return out


class HangWatch:
    """One job's hang watch (see the module's docstring): ``start``, then ``stop``.
    ``say`` gets each ``hang`` and ``hang_over`` event (on this watch's thread)."""

    def __init__(self, seconds: float, job: str, job_dir: str, held: Callable[[], bool],
                 say: Callable[[dict[str, Any]], None]) -> None:
        self.seconds = seconds
        self.job = job
        self.job_dir = job_dir
        self.tick = tick_of(seconds)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._marks: dict[int, Hashable] = {}
        self._failed: str | None = None  # the last failure said
        self.rule = HangRule(seconds, job, self, held, say)
        self.rule.stopped = self._stop.is_set

    @property
    def diagnosis(self) -> Callable[[str], Diagnosis]:
        return self.rule.diagnosis

    @diagnosis.setter
    def diagnosis(self, value: Callable[[str], Diagnosis]) -> None:
        self.rule.diagnosis = value

    def start(self) -> None:
        if self.seconds <= 0 or self._thread is not None:
            return
        self.rule.restart()
        self._thread = threading.Thread(target=self._run, name="rankdebug-hang-watch",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(self.tick):
            try:
                self.step()
            except Exception as exc:  # the job's supervision outlives the watch: said once
                said = f"{type(exc).__name__}: {exc}"
                if said != self._failed:
                    self._failed = said
                    sys.stderr.write(f"rankdebug: the hang watch could not read the job "
                                     f"({said}); it tries again\n")
                    sys.stderr.flush()

    def progressed(self) -> bool:
        """Whether any rank's collectives went on since the last read; ``False`` where no
        rank counts collectives (no handler, or torch.distributed not initialised)."""
        marks = progress_marks(self.job_dir)
        moved = any(marks.get(r) != m for r, m in self._marks.items()) or \
            any(r not in self._marks for r in marks)
        self._marks = marks
        return moved

    def counted(self) -> bool:
        return any(m is not None for m in self._marks.values())

    def step(self) -> None:
        """One look (``hang_rule.HangRule.step``)."""
        self.rule.step()

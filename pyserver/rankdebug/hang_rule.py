"""The hang rule, one for every watch: a job ``rankdebug launch`` supervises
(``supervise.hang_watch``) and a job found running (``jobs.watch_found``).

The watch looks every ``tick_of(S)`` seconds. Progress (what counts is the watch's own
signal: a rank's collective counters, a new rank) restarts the clock. When the clock passes
S, ``rankdebug diagnose``'s reading runs (the verb itself, ``rankdebug diagnose --json``:
every rank read a few times), and decides:

- it names culprits: the job hangs (``hang``: the culprits, the first one's sentence);
- a rank moved while it was read (a slow step, a long phase without collectives): progress,
  the clock restarts (culprits named or not, for a watch whose signal cannot prove the job
  still: ``moving_is_progress``);
- nothing is named and every rank read is busy on a CPU with none waiting in a collective
  (loading data or a checkpoint, a long call before the first collective): work, not a
  hang, the clock restarts (a spinning rank others wait for is named, and so said);
- nothing moved and nothing is named otherwise: it hangs all the same, ``why`` says what
  was seen;
- no rank could be read: nothing is said (nothing true could be).

The hang is said once; when progress resumes, ``hang_over``, and a later hang is said again.
Where the signal cannot see progress (``counted()`` false: no rank counts collectives),
progress after a hang is looked for by a diagnosis again every S seconds.

While ``held()`` (the user's own holds: a rank stopped in the debugger, a rank held at an
uncaught exception) the clock does not run and no diagnosis reads the ranks.
"""

from __future__ import annotations

import io
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from rankdebug.runtime import wire

DIAGNOSE_S = 120.0  # the verb's own reads take seconds; a bound, never a wait


def tick_of(seconds: float) -> float:
    """How often progress is read: a tenth of S, from 0.5 s to 2 s. The clock starts at the
    read that saw the last progress, up to a tick after it, so a hang is said within S, a
    tick and the diagnosis (2 to 3 s) of its start: S + 5 s."""
    return min(2.0, max(0.5, seconds / 10))


@dataclass
class Diagnosis:
    """What the diagnosis saw: ranks read, whether any moved, and the findings."""

    read: bool
    moved: bool
    culprits: list[dict[str, Any]]
    said: str  # the first culprit's sentence, else what was seen
    working: bool = False  # every rank read busy on a CPU, none waiting in a collective


def diagnose(job: str) -> Diagnosis:
    """``rankdebug diagnose JOB --json`` of this host's ranks, run as the verb (a watch does
    not import the jobs layer: the supervisor is its sibling); once per S at most."""
    try:
        out = subprocess.run([sys.executable, "-m", "rankdebug", "diagnose", "--json", "--",
                              job], capture_output=True, text=True, timeout=DIAGNOSE_S,
                             check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return Diagnosis(False, False, [], "")
    if out.returncode != 0:  # the job has gone, or no rank could be read
        return Diagnosis(False, False, [], "")
    lines = list(wire.messages(io.BytesIO(out.stdout.encode())))
    ranks = [ln for ln in lines if ln.get("event") == "rank"]
    culprits = [{k: v for k, v in ln.items() if k != "event"} for ln in lines
                if ln.get("event") == "culprit"]
    healthy = next((str(ln.get("why") or "") for ln in lines if ln.get("event") == "healthy"),
                   "")
    read = any(isinstance(r.get("reads"), int) and r["reads"] > 0 for r in ranks)
    moved = any((r.get("moved") or r.get("progressed")) for r in ranks
                if r.get("state") not in ("exited", "raised"))
    said = str(culprits[0].get("why") or "") if culprits else healthy
    live = [r for r in ranks if isinstance(r.get("reads"), int) and r["reads"] > 0
            and r.get("state") not in ("exited", "raised")]
    working = bool(live) and all(r.get("manner") == "busy" and not r.get("collective")
                                 for r in live)
    return Diagnosis(read, moved, culprits, said, working)


class Signal(Protocol):
    """A watch's own signal of progress."""

    def progressed(self) -> bool:
        """Whether it saw progress since the last look (that look is the new baseline)."""

    def counted(self) -> bool:
        """Whether it can see progress at all (else a diagnosis looks for it while hung)."""


class HangRule:
    """The clock of one job (see the module's docstring). ``step`` is one look; the watch
    calls it every ``tick_of(seconds)``. ``say`` gets each ``hang`` and ``hang_over``
    event; ``stopped`` (set by the watch) says the watch is ending."""

    def __init__(self, seconds: float, job: str, signal: Signal, held: Callable[[], bool],
                 say: Callable[[dict[str, Any]], None]) -> None:
        self.seconds = seconds
        self.job = job
        self.progressed = signal.progressed
        self.counted = signal.counted
        self.held = held
        self.say = say
        self.stopped: Callable[[], bool] = lambda: False
        # A signal that never proves the job still (a found job's: the clock only ran) takes
        # a rank the diagnosis saw move as progress, culprits named or not.
        self.moving_is_progress = False
        self.diagnosis: Callable[[str], Diagnosis] = diagnose
        self.since = time.monotonic()  # the last progress seen (or the user's hold)
        self.hung = False
        self._checked = 0.0  # the last diagnosis, while hung

    def restart(self) -> None:
        self.since = time.monotonic()

    def step(self) -> None:
        """One look: progress restarts the clock (and ends a hang); past S, a diagnosis."""
        progressed = self.progressed()
        now = time.monotonic()
        if self.held():  # the user's doing: the clock waits with them
            self.since = now
            return
        if progressed:
            self._over(now)
            return
        if now - self.since < self.seconds:
            return
        if self.hung:
            if not self.counted() and now - self._checked >= self.seconds:
                self._checked = now
                if self.diagnosis(self.job).moved and not self.held():
                    self._over(time.monotonic())
            return
        self._check()

    def _check(self) -> None:
        found = self.diagnosis(self.job)
        # What happened while it read: a hold of the user's or progress calls it off.
        if self.stopped() or self.held() or self.progressed():
            self.since = time.monotonic()
            return
        now = time.monotonic()
        if not found.read:  # nothing true to say: look again in S seconds
            self.since = now
            return
        if found.moved and (not found.culprits or self.moving_is_progress):  # slow, not stuck
            self.since = now
            return
        if found.working and not found.culprits:  # busy, nobody waits on it: work
            self.since = now
            return
        seconds = round(now - self.since, 1)
        lead = f"no rank has made progress for {seconds:g} s"
        why = f"{lead}: {found.said}" if found.said else lead
        self.hung, self._checked = True, now
        self.say({"event": "hang", "job": self.job, "seconds": seconds, "why": why,
                  "culprits": found.culprits})

    def _over(self, now: float) -> None:
        if self.hung:
            self.hung = False
            self.say({"event": "hang_over", "job": self.job,
                      "seconds": round(now - self.since, 1)})
        self.since = now

"""The hang watch of a job ``rankdebug launch`` started (``--hang-seconds S``, 0: off).

A thread of the supervisor's reads, every ``tick_of(S)`` seconds (S/10, 0.5 to 2 s), how far
each rank with a handler socket in the job's folder (chosen and armed ranks) has got in its
process groups' collectives: the ``collectives`` command, answered from the rank's handler
thread in a millisecond, the main thread untouched. Any change, a new rank included, is
progress and restarts the clock. When the clock passes S, ``rankdebug diagnose``'s reading
runs (the verb itself, ``rankdebug diagnose --json``: every rank read a few times; ranks
without a handler by py-spy), and decides:

- it names culprits: the job hangs (``hang``: the culprits, the first one's sentence);
- a rank moved while it was read (a slow step, a long phase without collectives): progress,
  the clock restarts;
- nothing moved and nothing is named: it hangs all the same, ``why`` says what was seen;
- no rank could be read: nothing is said (nothing true could be).

The hang is said once; when progress resumes, ``hang_over``, and a later hang is said again.
Where no rank has a handler that counts collectives, progress after a hang is looked for by
a diagnosis again every S seconds.

The user's own holds are no hang: while ``held()`` (a chosen rank stopped or being paused in
the debugger, waiting for its client, or a rank held at an uncaught exception), the clock
does not run, and no diagnosis reads the ranks.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from rankdebug.runtime import wire

ASK_S = 2.0  # a handler answers in milliseconds, even while its main thread waits
DIAGNOSE_S = 120.0  # the verb's own reads take seconds; a bound, never a wait
_SOCKET = re.compile(r"rank-(\d+)\.sock")


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


def diagnose(job: str) -> Diagnosis:
    """``rankdebug diagnose JOB --json`` of this host's ranks, run as the verb (the
    supervisor does not import the jobs layer, its sibling); once per S at most."""
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
    return Diagnosis(read, moved, culprits, said)


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
        self.held = held
        self.say = say
        self.diagnosis: Callable[[str], Diagnosis] = diagnose
        self.tick = tick_of(seconds)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._marks: dict[int, Hashable] = {}
        self._since = time.monotonic()  # the last progress seen (or the user's hold)
        self._hung = False
        self._checked = 0.0  # the last diagnosis, while hung
        self._failed: str | None = None  # the last failure said

    def start(self) -> None:
        if self.seconds <= 0 or self._thread is not None:
            return
        self._since = time.monotonic()
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

    def _progressed(self) -> bool:
        """Whether any rank's collectives went on since the last read; ``False`` where no
        rank counts collectives (no handler, or torch.distributed not initialised)."""
        marks = progress_marks(self.job_dir)
        moved = any(marks.get(r) != m for r, m in self._marks.items()) or \
            any(r not in self._marks for r in marks)
        self._marks = marks
        return moved

    def _counted(self) -> bool:
        return any(m is not None for m in self._marks.values())

    def step(self) -> None:
        """One look: progress restarts the clock (and ends a hang); past S, a diagnosis."""
        progressed = self._progressed()
        now = time.monotonic()
        if self.held():  # the user's doing: the clock waits with them
            self._since = now
            return
        if progressed:
            self._over(now)
            return
        if now - self._since < self.seconds:
            return
        if self._hung:
            if not self._counted() and now - self._checked >= self.seconds:
                self._checked = now
                if self.diagnosis(self.job).moved and not self.held():
                    self._over(time.monotonic())
            return
        self._check()

    def _check(self) -> None:
        found = self.diagnosis(self.job)
        # What happened while it read: a hold of the user's or progress calls it off.
        if self._stop.is_set() or self.held() or self._progressed():
            self._since = time.monotonic()
            return
        now = time.monotonic()
        if not found.read:  # nothing true to say: look again in S seconds
            self._since = now
            return
        if not found.culprits and found.moved:  # slow, not stuck
            self._since = now
            return
        seconds = round(now - self._since, 1)
        lead = f"no rank has made progress for {seconds:g} s"
        why = f"{lead}: {found.said}" if found.said else lead
        self._hung, self._checked = True, now
        self.say({"event": "hang", "job": self.job, "seconds": seconds, "why": why,
                  "culprits": found.culprits})

    def _over(self, now: float) -> None:
        if self._hung:
            self._hung = False
            self.say({"event": "hang_over", "job": self.job,
                      "seconds": round(now - self._since, 1)})
        self._since = now

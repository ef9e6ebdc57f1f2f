"""``Together``: the group layer of one job. What the gates report (a rank stopped, went on,
lost its client), stop together, and where a stopped rank is (its ``stopped`` event); the
group commands (``commands.py``) and the reading of late ranks (``late.py``) are its parts."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from rankdebug.debugplan.options import StopMode
from rankdebug.supervise.gates.gate import Gate
from rankdebug.supervise.gates.waiting import main_thread
from rankdebug.supervise.together.commands import GroupCommands
from rankdebug.supervise.together.late import LateRanks
from rankdebug.supervise.together.state import (
    NOT_WAITING,
    WAIT_READ_S,
    Flights,
    JobSide,
    RankDebug,
)


class Together:
    """The group layer of one job (see the package's docstring). Runs on the supervisor's
    loop thread only: what arrives on other threads (a gate's answers, a stack read) is
    ``post``-ed there, so that no lock of ours is ever taken under a gate's."""

    def __init__(self, gates: Mapping[int, Gate], job: JobSide,
                 mode: StopMode = "together") -> None:
        self.gates = gates
        self.job = job
        self.mode: StopMode = mode
        self.ranks: dict[int, RankDebug] = {}
        self.flights = Flights(job)
        self.late = LateRanks(self)
        self.group = GroupCommands(self)

    def rank(self, rank: int) -> RankDebug:
        return self.ranks.setdefault(rank, RankDebug(rank))

    def command(self, cmd: dict[str, Any]) -> list[int]:
        """Carry out one group command; the ranks it acted on. Raises CommandError."""
        return self.group.command(cmd)

    def tick(self) -> None:
        """Ranks of a group command that have not arrived: read where they wait."""
        self.late.tick()

    # --- what the gates report ----------------------------------------------------------

    def on_gate(self, rank: int, what: str, info: dict[str, Any]) -> None:
        if what == "stopped":
            self._on_stopped(rank, info)
        elif what in ("continued", "resumed"):
            self.on_continued(rank)
        elif what == "disconnected":
            st = self.rank(rank)
            st.pausing = st.resume = False
            if st.stopped:  # debugpy lets a rank run on when its client goes
                self.on_continued(rank)

    def _on_stopped(self, rank: int, info: dict[str, Any]) -> None:
        st = self.rank(rank)
        if st.resume and not st.stopped:
            # The pause of a rank the job continued while it was shown waiting: the
            # collective returned just before, so the gate had no waiting left to call off.
            st.resume = False
            thread = info.get("threadId")
            if self.gates[rank].request("continue", {"threadId": thread or st.thread or 0}):
                return
        if st.waiting is not None:  # shown paused already: now with its real frames
            st.waiting, st.numbered = None, {}
            st.stopped = False
        elif st.stopped:
            return  # the same stop said twice
        asked = st.pausing  # the job paused it (stop together, Pause All)
        st.stopped, st.pausing = True, False
        st.reason = str(info.get("reason") or "pause")
        thread = info.get("threadId")
        st.thread = thread if isinstance(thread, int) else st.thread
        then, st.then = st.then, None
        # A stop on the way (the pause before a run-to) is not the group's arrival.
        moving = then is None and self.flights.arrive(rank)
        # The landing of the job's own pause is no new stop: a rank continued since it was
        # asked runs on (else continuing one rank while another's pause is on its way would
        # pause the first again, and again).
        landed = asked and st.reason == "pause"
        if not moving and not landed and then is None and self.mode == "together":
            self._stop_others(rank)
        st.stops += 1
        self._locate(rank, st.reason, st.stops)
        if then is not None:
            then()

    def on_continued(self, rank: int) -> None:
        """The rank runs again (its gate said so, or the job continued it)."""
        st = self.rank(rank)
        if not st.stopped:
            return
        st.stopped, st.where, st.waiting, st.numbered = False, None, None, {}
        st.pausing = False  # a rank shown waiting, continued: its pause is called off
        gate = self.gates.get(rank)
        if gate is not None:
            gate.held = False
        self.job.record(rank, {"state": "running", "where": None, **NOT_WAITING})
        if st.said < st.stops:
            # Its stop is not said yet (its place is being read): continued comes after it,
            # so that a client stepping 10 ms after a stop still sees stopped, then continued.
            st.unsaid = True
            return
        self.job.emit_job({"event": "continued", "rank": rank})

    def _stop_others(self, first: int) -> None:
        """Stop together: pause every other chosen rank that runs (not those a group command
        is moving: they stop on their own)."""
        moving = self.flights.moving()
        for rank in sorted(self.gates):
            st = self.rank(rank)
            if rank != first and not st.stopped and not st.pausing and rank not in moving:
                self.pause(rank)

    def pause(self, rank: int) -> bool:
        """Ask the rank to pause; one that has not stopped soon is read from outside."""
        gate = self.gates[rank]
        if not gate.client():
            return False  # nobody could see it paused, or continue it
        st = self.rank(rank)
        st.pausing, st.reads, st.resume = True, 0, False
        if gate.request("pause", {"threadId": st.thread or 0}) or (
                gate.adapter is None and self.job.pause_untraced(rank)):  # it attaches
            timer = threading.Timer(WAIT_READ_S, self.job.post,
                                    (lambda: self.late.read_paused(rank),))
            timer.daemon = True
            timer.start()
            return True
        st.pausing = False
        return False

    def _locate(self, rank: int, reason: str, stop: int) -> None:
        """Where the rank stopped (its top frame of user code), then the ``stopped`` event
        of its ``stop``-th stop."""
        gate = self.gates[rank]

        def answered(then: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
            return lambda resp: self.job.post(lambda: then(resp))

        def found(resp: dict[str, Any]) -> None:
            self._stopped_at(rank, reason, resp, stop)

        def at(thread: int) -> None:
            self.rank(rank).thread = thread
            if not gate.request("stackTrace", {"threadId": thread, "startFrame": 0, "levels": 1},
                                answered(found)):
                found({})

        st = self.rank(rank)
        if reason == "pause" or st.thread is None:
            # A pause stops every thread and names any of them: show the main thread.
            if not gate.request("threads", {},
                                answered(lambda resp: at(main_thread(resp, st.thread)))):
                found({})
        else:
            at(st.thread)

    def _stopped_at(self, rank: int, reason: str, resp: dict[str, Any], stop: int) -> None:
        frames = (resp.get("body") or {}).get("stackFrames") or []
        top = frames[0] if frames and isinstance(frames[0], dict) else {}
        name = top.get("name")
        if isinstance(name, str):  # debugpy marks the raising frame at an exception stop
            name = name.removesuffix(" (Current frame)")
        where = {"file": (top.get("source") or {}).get("path"), "line": top.get("line"),
                 "function": name}
        st = self.rank(rank)
        latest = stop == st.stops
        st.said = max(st.said, stop)
        if st.stopped and latest:
            st.where = where
            self.job.record(rank, {"state": "paused", "where": dict(where, reason=reason),
                                   **NOT_WAITING})
            self.job.emit_job({"event": "stopped", "rank": rank, "reason": reason, **where})
        elif not latest or st.unsaid:
            # It ran on before its stop was said (a client stepped at once): the stop, then
            # that it went on, in order. A later stop is said on its own.
            st.unsaid = st.unsaid and not latest
            self.job.emit_job({"event": "stopped", "rank": rank, "reason": reason, **where})
            self.job.emit_job({"event": "continued", "rank": rank})
        self.flights.shown(rank)

"""The chosen ranks debugged as one: stop together, group commands, run to a line together.

Each chosen rank's gate relays its DAP session and reports the adapter's ``stopped`` and
``continued`` events here; the job's own requests go back through the same gate (the client
then sees the events they cause, as if it had asked). What this gives, as Linaro DDT and
TotalView give HPC programs:

- **Stop together** (the default; ``alone`` turns it off): when a chosen rank stops (a
  breakpoint, an exception, a step, a pause), every other chosen rank that runs is paused
  where it is, so that each shows where it was when the first stopped. A rank that runs
  untraced is told to attach and pause (``Gate.held``).
- **Group commands** (``continue``, ``pause``, ``step``): on a set of ranks at once. A group
  step reports ``arrived`` when every rank has stopped again; a rank that has not after
  ``BLOCKED_AFTER_S`` is read and reported ``blocked`` in the collective it waits in, which
  is not a hang: its peers are stopped. The rank's own handler (``runtime.handler``, served
  by every chosen rank from a thread of its own, so it answers while the main thread waits)
  names the operation, its process group, its sequence number and who issued it from
  PyTorch's records (``runtime.collectives``; also a collective torch issues from C++, as
  DDP's bucket all_reduce inside ``backward``); where it cannot answer, ``py-spy`` reads the
  stack from outside and gives the operation's name alone.
- **Run to a line** (TotalView's barrier point): every rank of the group runs to the line and
  holds there; ``arrived`` when the last is there. The line is a breakpoint of the job's
  own for the while, removed again when the group has arrived.

Events (``--json``): ``stopped`` (rank, reason, file, line, function; ``waiting``, and where
known ``seq``, ``group`` and ``context``, for a rank shown paused in a collective),
``continued``, ``arrived`` (command, ranks) and ``blocked`` (rank, in; ``seq``, ``group`` and
``context`` where known). ``context`` says who issued the collective ("DDP bucket, from
backward"); the client's stop reads "Paused: waiting in all_reduce #4 (DDP bucket, from
backward)". The registry entry of a rank that waits in a collective has ``collective`` (its
name), ``seq``, ``group`` and ``context`` (``rankdebug jobs --json``: the rank's
``collective``).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from rankdebug import ranks as rankspec
from rankdebug.debugplan.options import STOP_MODES, StopMode
from rankdebug.supervise.gates.gate import Gate
from rankdebug.supervise.gates.waiting import WaitFrame, main_thread

BLOCKED_AFTER_S = 1.0
# A rank asked to pause that has not stopped by then is read from outside: it may wait in
# native code (a collective whose peer is stopped), where no pause can reach it. A rank
# that is on a core (running library code, where justMyCode lets no pause land) is read
# again later, up to ACTIVE_READS times; then it is shown in what it runs.
ACTIVE_READS = 6
WAIT_READ_S = 0.25
HANDLER_ASK_S = 2.0  # the rank's handler answers in milliseconds, even while it waits
ASYNC_ASK_S = 0.3  # the same question where no collective shows on the stack
STEPS = {"over": "next", "in": "stepIn", "out": "stepOut"}
GROUP_COMMANDS = frozenset({"continue", "pause", "step", "run-to", "stop-mode"})


class CommandError(ValueError):
    """A group command that cannot be carried out; the message says why."""


@dataclass
class RankDebug:
    """What the job knows of one chosen rank's debugger."""

    rank: int
    stopped: bool = False
    thread: int | None = None  # the thread that stopped: the one to step or continue
    reason: str | None = None
    where: dict[str, Any] | None = None
    pausing: bool = False  # the job has asked it to pause
    waiting: str | None = None  # shown paused while it waits in this (native code)
    numbered: dict[str, Any] = field(default_factory=dict)  # its seq and group, where known
    reads: int = 0  # stack reads since the job asked it to pause
    then: Callable[[], None] | None = None  # what to do at its next stop (run-to)
    resume: bool = False  # continued while shown waiting, its real stop on the way: go on
    stops: int = 0  # stops seen; the one whose place is being read is the last
    said: int = 0  # the last stop whose stopped event is out
    unsaid: bool = False  # continued before its stopped event was out: said after it


@dataclass
class Flight:
    """A group step or run-to whose ranks have not all stopped yet."""

    command: str
    ranks: list[int]
    left: set[int]  # not stopped yet
    unshown: set[int]  # stopped, its stopped event not out yet
    started: float = field(default_factory=time.monotonic)
    read: set[int] = field(default_factory=set)  # ranks whose stack was read for a collective
    undo: dict[int, Callable[[], None]] = field(default_factory=dict)  # run-to: restore


class JobSide(Protocol):
    """What the group layer needs of its supervisor."""

    job_dir: str  # the job's registry folder: each rank's handler socket is in it

    def emit_job(self, event: dict[str, Any]) -> None: ...  # a --json event of this job

    def post(self, fn: Callable[[], None]) -> None: ...  # run on the loop thread

    def pause_untraced(self, rank: int) -> bool: ...  # attach, paused; False: cannot

    def pid_of(self, rank: int) -> int | None: ...

    def record(self, rank: int, fields: dict[str, Any]) -> None: ...  # the registry entry


class Together:
    """The group layer of one job (see the module's docstring). Runs on the supervisor's
    loop thread only: what arrives on other threads (a gate's answers, a stack read) is
    ``post``-ed there, so that no lock of ours is ever taken under a gate's."""

    def __init__(self, gates: Mapping[int, Gate], job: JobSide,
                 mode: StopMode = "together") -> None:
        self.gates = gates
        self.job = job
        self.mode: StopMode = mode
        self.ranks: dict[int, RankDebug] = {}
        self.flights: list[Flight] = []

    def _rank(self, rank: int) -> RankDebug:
        return self.ranks.setdefault(rank, RankDebug(rank))

    # --- what the gates report ----------------------------------------------------------

    def on_gate(self, rank: int, what: str, info: dict[str, Any]) -> None:
        if what == "stopped":
            self._on_stopped(rank, info)
        elif what in ("continued", "resumed"):
            self._on_continued(rank, info)
        elif what == "disconnected":
            st = self._rank(rank)
            st.pausing = st.resume = False
            if st.stopped:  # debugpy lets a rank run on when its client goes
                self._on_continued(rank, {})

    def _on_stopped(self, rank: int, info: dict[str, Any]) -> None:
        st = self._rank(rank)
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
        moving = then is None and self._arrive(rank)
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

    def _on_continued(self, rank: int, info: dict[str, Any]) -> None:
        st = self._rank(rank)
        if not st.stopped:
            return
        st.stopped, st.where, st.waiting, st.numbered = False, None, None, {}
        st.pausing = False  # a rank shown waiting, continued: its pause is called off
        gate = self.gates.get(rank)
        if gate is not None:
            gate.held = False
        self.job.record(rank, {"state": "running", "where": None, **_NOT_WAITING})
        if st.said < st.stops:
            # Its stop is not said yet (its place is being read): continued comes after it,
            # so that a client stepping 10 ms after a stop still sees stopped, then continued.
            st.unsaid = True
            return
        self.job.emit_job({"event": "continued", "rank": rank})

    def _stop_others(self, first: int) -> None:
        """Stop together: pause every other chosen rank that runs (not those a group command
        is moving: they stop on their own)."""
        moving = {r for f in self.flights for r in f.left}
        for rank in sorted(self.gates):
            st = self._rank(rank)
            if rank != first and not st.stopped and not st.pausing and rank not in moving:
                self._pause(rank)

    def _pause(self, rank: int) -> bool:
        gate = self.gates[rank]
        if not gate.client():
            return False  # nobody could see it paused, or continue it
        st = self._rank(rank)
        st.pausing, st.reads, st.resume = True, 0, False
        if gate.request("pause", {"threadId": st.thread or 0}) or (
                gate.adapter is None and self.job.pause_untraced(rank)):  # it attaches
            timer = threading.Timer(WAIT_READ_S, self.job.post,
                                    (lambda: self._read_paused(rank),))
            timer.daemon = True
            timer.start()
            return True
        st.pausing = False
        return False

    def _read_paused(self, rank: int) -> None:
        """A rank asked to pause has not stopped yet: read where it is (on a thread)."""
        pid = self.job.pid_of(rank)
        st = self._rank(rank)
        if st.pausing and pid is not None:
            st.reads += 1
            threading.Thread(target=self._read_stack, args=(rank, pid), daemon=True).start()

    def _read_stack(self, rank: int, pid: int) -> None:
        from rankdebug import pyspy  # only when a rank is late

        try:
            threads = pyspy.dump(pid, nonblocking=True, timeout=10.0)
        except pyspy.StacksError as exc:
            why = f"rank {rank} did not pause and cannot be read: {exc}"
            self.job.post(lambda: self.job.emit_job({"event": "error", "rank": rank,
                                                     "message": why}))
            return
        main = next((t for t in threads if t.main), threads[0] if threads else None)
        # No frame (read as its stack changed: py-spy does not stop the rank; or in our own
        # frames): nothing to show it waiting in. On a core, running code (an import): the
        # pause comes soon. Either way read again, up to ACTIVE_READS.
        again = self._rank(rank).reads < ACTIVE_READS
        if main is None or not main.frames or (main.active and again):
            if again:
                self.job.post(lambda: self._read_again(rank))
            return
        found = pyspy.collective(threads)
        frames = [WaitFrame(f.name, f.file, f.line, f.library)  # rankdebug's: parsed out
                  for f in main.frames]
        # Which collective, from the rank's own records (PyTorch's Flight Recorder: also one
        # issued from C++, as DDP's bucket all_reduce inside backward, or waited for in
        # ``work.wait()``, with no torch.distributed frame on the stack). A main thread that
        # does not hold the GIL lets the handler answer at once; one that holds it (other
        # native code) may not answer at all: asked briefly then.
        ask = HANDLER_ASK_S if found or not main.owns_gil else ASYNC_ASK_S
        told = self._ask_collective(rank, ask)
        what, numbered, shown = _waiting_words(told, found, frames)
        self.job.post(lambda: self._show_waiting(rank, what, frames, numbered, shown))

    def _read_again(self, rank: int) -> None:
        timer = threading.Timer(WAIT_READ_S * 2, self.job.post,
                                (lambda: self._read_paused(rank),))
        timer.daemon = True
        timer.start()

    def _show_waiting(self, rank: int, what: str, frames: list[WaitFrame],
                      numbered: dict[str, Any], shown: str) -> None:
        """``what``: the collective's name (the events' ``waiting``); ``shown``: its label
        for the client (``all_reduce #4 (DDP bucket, from backward)``)."""
        st = self._rank(rank)
        if not st.pausing or st.stopped or not self.gates[rank].show_waiting(shown, frames):
            return
        st.stopped, st.waiting, st.numbered = True, what, numbered
        user = next((f for f in frames if not f.library), frames[0] if frames else None)
        where = {"file": user.file if user else None, "line": user.line if user else None,
                 "function": user.name if user else None}
        st.where = where
        self.job.record(rank, {"state": "paused", "where": dict(where, reason="pause",
                                                                waiting=what),
                               **_waiting_fields(what, numbered)})
        self.job.emit_job({"event": "stopped", "rank": rank, "reason": "pause", "waiting": what,
                           **where, **numbered})
        # No stop of the others from here: only the job's own pause is shown waiting.

    def _locate(self, rank: int, reason: str, stop: int) -> None:
        """Where the rank stopped (its top frame of user code), then the ``stopped`` event
        of its ``stop``-th stop."""
        gate = self.gates[rank]

        def answered(then: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
            return lambda resp: self.job.post(lambda: then(resp))

        def found(resp: dict[str, Any]) -> None:
            self._stopped_at(rank, reason, resp, stop)

        def at(thread: int) -> None:
            self._rank(rank).thread = thread
            if not gate.request("stackTrace", {"threadId": thread, "startFrame": 0, "levels": 1},
                                answered(found)):
                found({})

        st = self._rank(rank)
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
        st = self._rank(rank)
        latest = stop == st.stops
        st.said = max(st.said, stop)
        if st.stopped and latest:
            st.where = where
            self.job.record(rank, {"state": "paused", "where": dict(where, reason=reason),
                                   **_NOT_WAITING})
            self.job.emit_job({"event": "stopped", "rank": rank, "reason": reason, **where})
        elif not latest or st.unsaid:
            # It ran on before its stop was said (a client stepped at once): the stop, then
            # that it went on, in order. A later stop is said on its own.
            st.unsaid = st.unsaid and not latest
            self.job.emit_job({"event": "stopped", "rank": rank, "reason": reason, **where})
            self.job.emit_job({"event": "continued", "rank": rank})
        self._shown(rank)

    # --- group commands -------------------------------------------------------------------

    def command(self, cmd: dict[str, Any]) -> list[int]:
        """Carry out one group command; the ranks it acted on. Raises CommandError."""
        name = cmd.get("command")
        if name == "stop-mode":
            mode = cmd.get("mode")
            if mode not in STOP_MODES:
                raise CommandError("stop-mode takes mode: together or alone")
            self.mode = mode
            return sorted(self.gates)
        group = self.select(cmd.get("ranks"))
        if name == "continue":
            # Ranks shown waiting first: a peer continued before could end their collective,
            # and so land their pending pause, before the gate knows to let them run on.
            waiting = [r for r in group if self._rank(r).waiting is not None]
            acted = sorted(r for r in [*waiting, *(r for r in group if r not in waiting)]
                           if self._continue(r))
        elif name == "pause":
            acted = [r for r in group if self._rank(r).stopped or self._pause(r)]
        elif name == "step":
            acted = self._step(group, cmd.get("kind", "over"))
        elif name == "run-to":
            acted = self._run_to(group, cmd.get("file"), cmd.get("line"))
        else:
            raise CommandError(f"unknown command {name!r}")
        if not acted:
            raise CommandError(f"{name}: no rank of {_label(group)} can do that now "
                               "(a rank needs a debugger client; step needs a paused rank)")
        return acted

    def select(self, raw: object) -> list[int]:
        """The chosen ranks a command's ``ranks`` names (none given: all of them)."""
        try:
            spec = rankspec.normalise(raw, default="all")
            rankspec.items(spec)
        except rankspec.RanksError as exc:
            raise CommandError(str(exc)) from None
        group = [r for r, g in sorted(self.gates.items())
                 if rankspec.chosen(spec, r, g.local_rank)]
        if not group:
            raise CommandError(f"no chosen rank is in {spec!r} (chosen: "
                               f"{_label(sorted(self.gates)) or 'none'})")
        return group

    def _continue(self, rank: int) -> bool:
        st = self._rank(rank)
        gate = self.gates[rank]
        if st.waiting is not None:
            done = gate.release_waiting()
            if not done and gate.client():
                # Its real stop came meanwhile (reported, not yet here): continue it then.
                st.resume = done = True
        else:
            done = st.stopped and gate.request("continue", {"threadId": st.thread or 0})
        if done:
            self._on_continued(rank, {})
        return done

    def _step(self, group: list[int], kind: object) -> list[int]:
        command = STEPS.get(str(kind))
        if command is None:
            raise CommandError("step takes kind: over, in or out")
        for rank in group:
            st = self._rank(rank)
            if st.waiting is not None:  # it cannot step before its collective returns
                self.job.emit_job({"event": "blocked", "rank": rank, "in": st.waiting,
                                   **st.numbered})
        acted = [r for r in group if self._rank(r).stopped and self._rank(r).waiting is None
                 and self._rank(r).thread is not None]
        blocked = [r for r in group if self._rank(r).waiting is not None]
        if not acted and blocked:
            # Every rank asked waits in a collective: none steps, and that is the answer
            # (each has said "blocked"); they stop for real when the collective returns.
            self.job.emit_job({"event": "arrived", "command": "step", "ranks": []})
            return blocked
        if acted:
            self.flights.append(Flight("step", acted, set(acted), set()))
        for rank in acted:
            if self.gates[rank].request(command, {"threadId": self._rank(rank).thread}):
                self._on_continued(rank, {})
            else:
                self._arrive(rank)  # its client went: nothing to wait for
                self._shown(rank)
        return acted

    def _run_to(self, group: list[int], path: object, line: object) -> list[int]:
        if not isinstance(path, str) or not isinstance(line, int) or line < 1:
            raise CommandError("run-to takes file (a path) and line (a number from 1)")
        path = os.path.realpath(path)
        acted = [r for r in group if self.gates[r].client()]
        flight = Flight("run-to", acted, set(acted), set())
        self.flights.append(flight)
        for rank in acted:
            st = self._rank(rank)
            if st.stopped or self.gates[rank].adapter is not None:
                self._go_to(rank, flight, path, line)
            else:
                # Untraced: the debugger comes first (paused), then the line.
                st.then = lambda r=rank: self._go_to(r, flight, path, line)
                if not self._pause(rank):
                    st.then = None
                    self._arrive(rank)
                    self._shown(rank)
        return acted

    def _go_to(self, rank: int, flight: Flight, path: str, line: int) -> None:
        """Add the line to the rank's breakpoints (until the group has arrived); run."""
        gate = self.gates[rank]
        mine = gate.breakpoints(path)
        if not any(b.get("line") == line for b in mine["breakpoints"]):
            extra = dict(mine, breakpoints=[*mine["breakpoints"], {"line": line}])
            gate.request("setBreakpoints", extra)

            def undo() -> None:
                gate.request("setBreakpoints", mine)

            flight.undo[rank] = undo
        if self._rank(rank).stopped and not self._continue(rank):
            self._arrive(rank)
            self._shown(rank)

    def _arrive(self, rank: int) -> bool:
        """``rank`` has stopped: true when a group command was moving it."""
        moving = False
        for flight in self.flights:
            if rank in flight.left:
                moving = True
                flight.left.discard(rank)
                flight.unshown.add(rank)
        return moving

    def _shown(self, rank: int) -> None:
        """``rank``'s stopped event is out: a group whose ranks all are has ``arrived``."""
        for flight in list(self.flights):
            flight.unshown.discard(rank)
            if flight.left or flight.unshown:
                continue
            self.flights.remove(flight)
            for undo in flight.undo.values():
                undo()
            self.job.emit_job({"event": "arrived", "command": flight.command,
                               "ranks": flight.ranks})

    # --- ranks that do not arrive ----------------------------------------------------------

    def tick(self) -> None:
        """Ranks of a group command still running after BLOCKED_AFTER_S: read where they
        wait (in a thread; py-spy takes a while)."""
        now = time.monotonic()
        late = [(f, r) for f in self.flights if now - f.started > BLOCKED_AFTER_S
                for r in sorted(f.left - f.read)]
        for flight, rank in late:
            flight.read.add(rank)
        for _, rank in late:
            pid = self.job.pid_of(rank)
            if pid is not None:
                threading.Thread(target=self._read_wait, args=(rank, pid), daemon=True).start()

    def _read_wait(self, rank: int, pid: int) -> None:
        """On a thread of its own: ask the rank's handler (the number too), else py-spy."""
        found = self._ask_collective(rank)
        if found is None:
            from rankdebug import pyspy  # only when a rank is late and cannot say

            try:
                found = pyspy.collective(pyspy.dump(pid, nonblocking=True, timeout=10.0))
            except pyspy.StacksError:
                return
        if found is not None:
            told = found
            self.job.post(lambda: self._blocked(rank, told))

    def _ask_collective(self, rank: int, timeout: float = HANDLER_ASK_S
                        ) -> dict[str, Any] | None:
        """The collective the rank's main thread waits in, as its handler reads it from
        PyTorch's records: {"name", "seq", "group", "context", "label", "file", "line"} (seq,
        group and context None where unknown); None when the rank waits in none or cannot
        answer. Any thread."""
        from rankdebug.runtime import handler, wire

        path = handler.socket_path(self.job.job_dir, rank)
        try:
            reply = wire.ask(path, {"command": "collectives"}, timeout=timeout)
        except wire.WireError:
            return None
        state = reply.get("collectives")
        current = state.get("current") if isinstance(state, dict) else None
        if not isinstance(current, dict) or not isinstance(current.get("op"), str):
            return None
        seq, group = current.get("seq"), current.get("group")
        context, text = current.get("context"), current.get("label")
        return {"name": current["op"],
                "seq": seq if isinstance(seq, int) and not isinstance(seq, bool) else None,
                "group": group if isinstance(group, str) else None,
                "context": context if isinstance(context, str) and context else None,
                "label": text if isinstance(text, str) and text else current["op"],
                "file": current.get("file"), "line": current.get("line")}

    def _blocked(self, rank: int, found: dict[str, Any]) -> None:
        if any(rank in f.left for f in self.flights):
            numbered = _numbered(found)
            self.job.record(rank, {"state": "blocked", **_waiting_fields(found["name"],
                                                                         numbered)})
            self.job.emit_job({"event": "blocked", "rank": rank, "in": found["name"],
                               "file": found.get("file"), "line": found.get("line"),
                               **numbered})


# A rank's registry fields for the collective it waits in (none: cleared).
_NOT_WAITING: dict[str, Any] = {"collective": None, "seq": None, "group": None, "context": None}


def _numbered(found: dict[str, Any]) -> dict[str, Any]:
    """A collective's ``seq``, ``group`` and ``context`` (who issued it: "DDP bucket, from
    backward"), those known (an event's optional fields)."""
    return {k: found[k] for k in ("seq", "group", "context") if found.get(k) is not None}


def _waiting_words(told: dict[str, Any] | None, found: dict[str, Any] | None,
                   frames: list[WaitFrame]) -> tuple[str, dict[str, Any], str]:
    """What a rank read from outside waits in: the rank's own records' word (``told``),
    else a collective by name on its stack (``found``), else the library call it is in (a
    queue's get); its number, group and context; the label a client is shown."""
    what = told["name"] if told else found["name"] if found else (
        frames[0].name if frames and frames[0].library else "native code")
    numbered = _numbered(told) if told else {}
    return what, numbered, str(told.get("label") or what) if told else what


def _waiting_fields(name: str, numbered: dict[str, Any]) -> dict[str, Any]:
    return {**_NOT_WAITING, "collective": name, **numbered}


def _label(group: list[int]) -> str:
    return ",".join(map(str, group))

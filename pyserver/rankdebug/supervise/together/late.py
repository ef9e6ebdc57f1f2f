"""Ranks asked to stop that have not: read from outside. A rank asked to pause may wait in
native code (a collective whose peer is stopped) where no pause lands: it is shown paused in
what it waits in. A rank a group command moves that has not stopped after
``BLOCKED_AFTER_S`` is reported ``blocked`` in its collective (not a hang: its peers are
stopped). The rank's own handler (``runtime.handler``, answering from a thread of its own
while the main thread waits) names the collective from PyTorch's records; where it cannot
answer, ``py-spy`` reads the stack and gives the operation's name alone."""

from __future__ import annotations

import threading
import time
from typing import Any

from rankdebug.supervise.gates.waiting import WaitFrame
from rankdebug.supervise.together.state import (
    ACTIVE_READS,
    ASYNC_ASK_S,
    BLOCKED_AFTER_S,
    HANDLER_ASK_S,
    WAIT_READ_S,
    Layer,
    numbered,
    waiting_fields,
)


class LateRanks:
    """The reading of one job's late ranks; its methods named ``read_*`` run on threads of
    their own and ``post`` what they found to the loop thread."""

    def __init__(self, together: Layer) -> None:
        self.t = together

    # --- a rank asked to pause -------------------------------------------------------------

    def read_paused(self, rank: int) -> None:
        """A rank asked to pause has not stopped yet: read where it is (on a thread)."""
        pid = self.t.job.pid_of(rank)
        st = self.t.rank(rank)
        if st.pausing and pid is not None:
            st.reads += 1
            threading.Thread(target=self.read_stack, args=(rank, pid), daemon=True).start()

    def read_stack(self, rank: int, pid: int) -> None:
        from rankdebug import pyspy  # only when a rank is late

        job = self.t.job
        try:
            threads = pyspy.dump(pid, nonblocking=True, timeout=10.0)
        except pyspy.StacksError as exc:
            why = f"rank {rank} did not pause and cannot be read: {exc}"
            job.post(lambda: job.emit_job({"event": "error", "rank": rank, "message": why}))
            return
        main = next((t for t in threads if t.main), threads[0] if threads else None)
        # No frame (read as its stack changed: py-spy does not stop the rank; or in our own
        # frames): nothing to show it waiting in. On a core, running code (an import): the
        # pause comes soon. Either way read again, up to ACTIVE_READS.
        again = self.t.rank(rank).reads < ACTIVE_READS
        if main is None or not main.frames or (main.active and again):
            if again:
                job.post(lambda: self.read_again(rank))
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
        told = self.ask_collective(rank, ask)
        what, numbers, shown = _waiting_words(told, found, frames)
        job.post(lambda: self._show_waiting(rank, what, frames, numbers, shown))

    def read_again(self, rank: int) -> None:
        timer = threading.Timer(WAIT_READ_S * 2, self.t.job.post,
                                (lambda: self.read_paused(rank),))
        timer.daemon = True
        timer.start()

    def _show_waiting(self, rank: int, what: str, frames: list[WaitFrame],
                      numbers: dict[str, Any], shown: str) -> None:
        """``what``: the collective's name (the events' ``waiting``); ``shown``: its label
        for the client (``all_reduce #4 (DDP bucket, from backward)``)."""
        st = self.t.rank(rank)
        if not st.pausing or st.stopped or not self.t.gates[rank].show_waiting(shown, frames):
            return
        st.stopped, st.waiting, st.numbered = True, what, numbers
        user = next((f for f in frames if not f.library), frames[0] if frames else None)
        where = {"file": user.file if user else None, "line": user.line if user else None,
                 "function": user.name if user else None}
        st.where = where
        self.t.job.record(rank, {"state": "paused", "where": dict(where, reason="pause",
                                                                  waiting=what),
                                 **waiting_fields(what, numbers)})
        self.t.job.emit_job({"event": "stopped", "rank": rank, "reason": "pause",
                             "waiting": what, **where, **numbers})
        # No stop of the others from here: only the job's own pause is shown waiting.

    # --- ranks of a group command that do not arrive ---------------------------------------

    def tick(self) -> None:
        """Ranks of a group command still running after BLOCKED_AFTER_S: read where they
        wait (in a thread; py-spy takes a while)."""
        now = time.monotonic()
        late = [(f, r) for f in self.t.flights.all if now - f.started > BLOCKED_AFTER_S
                for r in sorted(f.left - f.read)]
        for flight, rank in late:
            flight.read.add(rank)
        for _, rank in late:
            pid = self.t.job.pid_of(rank)
            if pid is not None:
                threading.Thread(target=self.read_wait, args=(rank, pid), daemon=True).start()

    def read_wait(self, rank: int, pid: int) -> None:
        """On a thread of its own: ask the rank's handler (the number too), else py-spy."""
        found = self.ask_collective(rank)
        if found is None:
            from rankdebug import pyspy  # only when a rank is late and cannot say

            try:
                found = pyspy.collective(pyspy.dump(pid, nonblocking=True, timeout=10.0))
            except pyspy.StacksError:
                return
        if found is not None:
            told = found
            self.t.job.post(lambda: self._blocked(rank, told))

    def ask_collective(self, rank: int, timeout: float = HANDLER_ASK_S
                       ) -> dict[str, Any] | None:
        """The collective the rank's main thread waits in, as its handler reads it from
        PyTorch's records: {"name", "seq", "group", "context", "label", "file", "line"} (seq,
        group and context None where unknown); None when the rank waits in none or cannot
        answer. Any thread."""
        from rankdebug.runtime import handler, wire

        path = handler.socket_path(self.t.job.job_dir, rank)
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
        if any(rank in f.left for f in self.t.flights.all):
            numbers = numbered(found)
            self.t.job.record(rank, {"state": "blocked",
                                     **waiting_fields(found["name"], numbers)})
            self.t.job.emit_job({"event": "blocked", "rank": rank, "in": found["name"],
                                 "file": found.get("file"), "line": found.get("line"),
                                 **numbers})


def _waiting_words(told: dict[str, Any] | None, found: dict[str, Any] | None,
                   frames: list[WaitFrame]) -> tuple[str, dict[str, Any], str]:
    """What a rank read from outside waits in: the rank's own records' word (``told``),
    else a collective by name on its stack (``found``), else the library call it is in (a
    queue's get); its number, group and context; the label a client is shown."""
    what = told["name"] if told else found["name"] if found else (
        frames[0].name if frames and frames[0].library else "native code")
    numbers = numbered(told) if told else {}
    return what, numbers, str(told.get("label") or what) if told else what

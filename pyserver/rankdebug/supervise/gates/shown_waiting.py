"""A rank shown paused to its client while it waits in native code (a collective whose peer
is stopped), where debugpy's pause cannot land: the gate answers the client's views from the
frames read from outside (``waiting.Waiting``) until the rank stops for real, or is
continued; then its pause, which lands when the native call returns, is let go unseen."""

from __future__ import annotations

import threading
from typing import Any, Protocol

from rankdebug.supervise.gates import dapwire
from rankdebug.supervise.gates.dapwire import Endpoint
from rankdebug.supervise.gates.said import Said
from rankdebug.supervise.gates.side import Answer, GateSide
from rankdebug.supervise.gates.waiting import WaitFrame, Waiting, main_thread


class SessionSide(Protocol):
    """What is shown needs of its client session."""

    gate: GateSide
    client: Endpoint
    said: Said
    ended: bool
    live: bool
    replaying: bool

    @property
    def lock(self) -> threading.RLock: ...

    def request(self, command: str, args: dict[str, Any], answer: Answer | None = None
                ) -> bool: ...


class ShownWaiting:
    """One session's rank, shown waiting or not (the session's lock held throughout)."""

    def __init__(self, session: SessionSide) -> None:
        self.s = session
        self.waiting: Waiting | None = None  # shown paused while it waits in native code
        self.stops = 0  # debugpy's stopped events so far
        self.release = False  # continue the rank where its pending pause lands (unshown)
        self._showing = False  # shown waiting once the adapter names its main thread

    def show(self, what: str, frames: list[WaitFrame]) -> bool:
        """Show the client its rank paused, waiting in ``what``; False: no client to show."""
        s = self.s
        with s.lock:
            if s.ended or not s.said.configured or s.replaying:
                return False
            if self._just_my_code():
                frames = [f for f in frames if not f.library] or frames
            self._showing = True
            if not s.live:
                self._show(Waiting(s.gate.rank, 1, what, frames), self.stops)
                return True
            stops = self.stops
            return s.request("threads", {}, lambda resp: self._show(
                Waiting(s.gate.rank, main_thread(resp, None), what, frames), stops))

    def _just_my_code(self) -> bool:
        """As debugpy: library frames are hidden unless the client said otherwise."""
        args = (self.s.said.attach or {}).get("arguments") or {}
        return args.get("justMyCode", True) is not False

    def _show(self, waiting: Waiting, stops: int) -> None:
        with self.s.lock:
            showing, self._showing = self._showing, False
            if self.s.ended or stops != self.stops or not showing:
                return  # it stopped for real meanwhile, or was continued
            self.waiting = waiting
            self.s.client.send(dapwire.event("stopped", waiting.stopped_event_body()))

    def let_go(self) -> bool:
        """Continue a rank shown waiting: its pause is called off."""
        s = self.s
        with s.lock:
            waiting, self.waiting = self.waiting, None
            showing, self._showing = self._showing, False  # not shown yet: it never will be
            if waiting is None and not showing:
                return False
            if s.live:
                # Not "continue" now: debugpy answers it only once a thread it stopped runs
                # again, and this one never stopped (its pause waits for the native call to
                # return); until that answer its adapter answers nothing else, so the rank
                # could never be paused or stepped again. The pause lands when the call
                # returns: the rank is continued there, unseen (``stopped``).
                self.release = True
            else:
                s.gate.held = False
            if waiting is not None:
                s.client.send(dapwire.event("continued", {
                    "threadId": waiting.thread, "allThreadsContinued": True}))
            return True

    def answer(self, req: dict[str, Any]) -> bool:
        """A client's request while shown waiting; False: not one answered from here."""
        waiting = self.waiting
        assert waiting is not None
        client = self.s.client
        if req.get("command") == "continue":
            self.let_go()
            client.send(dapwire.response(req, {"allThreadsContinued": True}))
            self.s.gate.notify("resumed")
            return True
        handled, body, error = waiting.answer(req)
        if handled:
            client.send(dapwire.response(req, body) if error is None
                        else dapwire.response(req, message=error))
        return handled

    def stopped(self, body: dict[str, Any]) -> bool:
        """debugpy's ``stopped``: the rank stopped for real. False: the landing pause of a
        rank continued while shown waiting, continued at once and not to be seen."""
        self.stops += 1
        self.waiting, self._showing = None, False  # stopped for real: debugpy's frames
        if self.release and body.get("reason") == "pause":
            self.release = False
            self.s.request("continue", {"threadId": body.get("threadId") or 0})
            return False
        self.release = False
        return True

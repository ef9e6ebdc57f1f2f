"""One rank's DAP connection, held by the terminal debugger: the client its gate
(``supervise.gates.gate``) relays to debugpy. Configured as the extension's ``RankLink`` configures
one (initialize, attach, breakpoints, debugpy's default exception filters,
configurationDone), framed with ``supervise.gates.dapwire``. Events go to ``on_event`` from the
reader thread; requests wait for their response with a timeout, so a rank that does not
answer never holds the prompt."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable
from typing import Any

from rankdebug.supervise.gates import dapwire

OnEvent = Callable[["Link", dict[str, Any]], None]
CONNECT_S = 10.0
ANSWER_S = 30.0


class LinkError(RuntimeError):
    """A request that failed, was not answered, or a connection that is gone."""


class Link:
    """The DAP client of one rank's gate (see the module's docstring)."""

    def __init__(self, rank: int, host: str, port: int, on_event: OnEvent) -> None:
        self.rank = rank
        self.host, self.port = host, port
        self._on_event = on_event
        self._cond = threading.Condition()
        self._answers: dict[int, dict[str, Any]] = {}
        self._initialized = False
        self._attach_seq = 0
        self.configured = False
        self.closed = False
        self.refusal: str | None = None  # what the gate said when it turned us away
        self.end: dapwire.Endpoint | None = None

    # --- connecting -------------------------------------------------------------------

    def open(self) -> None:
        """Connect, initialize and attach: the rank's gate records the breakpoints sent from
        now on; it runs once ``configure`` has been called. Raises LinkError."""
        try:
            sock = socket.create_connection((self.host, self.port), timeout=CONNECT_S)
        except OSError as exc:
            raise LinkError(f"cannot connect to {self.host}:{self.port}: "
                            f"{exc.strerror or exc}") from None
        sock.settimeout(None)
        self.end = dapwire.Endpoint(sock)
        threading.Thread(target=self._read, name=f"rankdebug-repl-{self.rank}",
                         daemon=True).start()
        self.request("initialize", {"clientID": "rankdebug-repl", "adapterID": "rankdebug",
                                    "pathFormat": "path", "linesStartAt1": True,
                                    "columnsStartAt1": True})
        self._attach_seq = self.send("attach", {"justMyCode": True})
        with self._cond:
            if not self._cond.wait_for(lambda: self._initialized or self.closed, ANSWER_S):
                raise LinkError(f"rank {self.rank}: no initialized event")
        if self.closed:
            raise LinkError(self.refusal or f"rank {self.rank}: the connection closed")

    def configure(self) -> None:
        """debugpy's default exception filters, then configurationDone: the rank runs (or
        runs on) with the breakpoints sent so far. Raises LinkError."""
        if self.configured:
            return
        self.request("setExceptionBreakpoints", {"filters": ["uncaught"]})
        self.request("configurationDone", {})
        self.configured = True
        attached = self.answer(self._attach_seq, ANSWER_S)
        if not attached.get("success"):
            raise LinkError(f"rank {self.rank}: {attached.get('message') or 'attach refused'}")

    # --- requests ---------------------------------------------------------------------

    def send(self, command: str, args: dict[str, Any]) -> int:
        if self.end is None or self.closed:
            raise LinkError(f"rank {self.rank}: its connection is closed")
        seq = self.end.send({"type": "request", "command": command, "arguments": args})
        if not seq:
            raise LinkError(f"rank {self.rank}: its connection is closed")
        return seq

    def answer(self, seq: int, timeout: float) -> dict[str, Any]:
        with self._cond:
            if not self._cond.wait_for(lambda: seq in self._answers or self.closed, timeout):
                raise LinkError(f"rank {self.rank}: no answer within {timeout:g} s")
            if seq not in self._answers:
                raise LinkError(f"rank {self.rank}: its connection closed")
            return self._answers.pop(seq)

    def request(self, command: str, args: dict[str, Any], timeout: float = ANSWER_S
                ) -> dict[str, Any]:
        """The response's body; raises LinkError for a failed request (its message)."""
        resp = self.answer(self.send(command, args), timeout)
        if not resp.get("success"):
            raise LinkError(str(resp.get("message") or f"{command} failed"))
        body = resp.get("body")
        return body if isinstance(body, dict) else {}

    def close(self) -> None:
        """Detach as a client would: debugpy lets the rank run on."""
        if self.end is None or self.closed:
            return
        with contextlib.suppress(LinkError):
            self.request("disconnect", {"restart": False, "terminateDebuggee": False}, 3.0)
        self.end.close()

    # --- the reader -------------------------------------------------------------------

    def _read(self) -> None:
        assert self.end is not None
        while True:
            msg = self.end.read()
            if msg is None:
                break
            kind = msg.get("type")
            if kind == "response":
                with self._cond:
                    self._answers[int(msg.get("request_seq") or 0)] = msg
                    self._cond.notify_all()
            elif kind == "event":
                self._event(msg)
            elif kind == "request":  # a reverse request (runInTerminal): not ours to do
                self.end.send(dapwire.response(msg, message="not supported here"))
        with self._cond:
            self.closed = True
            self._cond.notify_all()
        self._on_event(self, {"event": "closed"})

    def _event(self, msg: dict[str, Any]) -> None:
        name = msg.get("event")
        body = msg.get("body") if isinstance(msg.get("body"), dict) else {}
        if name == "initialized":
            with self._cond:
                self._initialized = True
                self._cond.notify_all()
            return
        if name == "output" and not self._initialized:
            # The gate turns a second client away with one output event, then closes.
            self.refusal = str((body or {}).get("output") or "").strip() or None
            return
        self._on_event(self, {"event": name, "body": body or {}})

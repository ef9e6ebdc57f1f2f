"""A chosen rank's debug endpoint: a DAP server in the supervisor in front of debugpy.

The port a ``listening`` event names is a gate, not debugpy's adapter. While the rank runs
without a tracer (``--attach hit``) the gate answers the client itself: ``initialize`` with
debugpy's capabilities, ``attach``, the breakpoints and exception filters (recorded, and
sent to the rank so that it plants hit-hooks for those lines), ``configurationDone``,
``threads``, ``pause``. When the rank needs the debugger (a hook fires, Pause, a breakpoint
on a line without a hook, an uncaught exception) it connects to its adapter; the gate then
connects to that adapter as the client, replays what the client said (``--break`` lines
merged in), and from there relays every message both ways, renumbering ``seq`` so that each
side sees one consistent conversation. A client that connects after that is relayed from
its first message.

One client at a time, as debugpy's adapter itself allows; a connection that closes before
it says anything (a port scan) changes nothing. Only the job's owner gets in: the kernel's
socket table names the user of the connecting socket (``peer``).
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rankdebug.supervise import dapwire, peer
from rankdebug.supervise.dapwire import Endpoint

# debugpy 1.8's adapter answers ``initialize`` with these (debugpy/adapter/clients.py).
CAPABILITIES: dict[str, Any] = {
    "supportsCompletionsRequest": True,
    "supportsConditionalBreakpoints": True,
    "supportsConfigurationDoneRequest": True,
    "supportsDebuggerProperties": True,
    "supportsDelayedStackTraceLoading": True,
    "supportsEvaluateForHovers": True,
    "supportsExceptionInfoRequest": True,
    "supportsExceptionOptions": True,
    "supportsFunctionBreakpoints": True,
    "supportsHitConditionalBreakpoints": True,
    "supportsLogPoints": True,
    "supportsModulesRequest": True,
    "supportsSetExpression": True,
    "supportsSetVariable": True,
    "supportsValueFormattingOptions": True,
    "supportsTerminateDebuggee": True,
    "supportsTerminateRequest": True,
    "supportsGotoTargetsRequest": True,
    "supportsClipboardContext": True,
    "supportsStepInTargetsRequest": True,
    "exceptionBreakpointFilters": [
        {"filter": "raised", "label": "Raised Exceptions", "default": False,
         "description": "Break whenever any exception is raised."},
        {"filter": "uncaught", "label": "Uncaught Exceptions", "default": True,
         "description": "Break when the process is exiting due to unhandled exception."},
        {"filter": "userUnhandled", "label": "User Uncaught Exceptions", "default": False,
         "description": "Break when exception escapes into library code."},
    ],
}

# Requests the gate records while the rank is untraced, replayed to the adapter in order.
_CONFIG = ("setBreakpoints", "setFunctionBreakpoints", "setExceptionBreakpoints")
# Requests answered with an empty list while no debugger runs.
_EMPTY: dict[str, dict[str, Any]] = {"modules": {"modules": [], "totalModules": 0},
                                     "loadedSources": {"sources": []}}
# Exception filters a hit-hook cannot serve: the tracer must run from the start.
_TRACED_FILTERS = frozenset({"raised", "userUnhandled"})

Notify = Callable[[str], None]


@dataclass
class _Said:
    """What the client has said so far, in the order it matters for a replay."""

    initialize: dict[str, Any] | None = None
    attach: dict[str, Any] | None = None
    attach_answered: bool = False
    initialized_sent: bool = False
    config: dict[str, dict[str, Any]] = field(default_factory=dict)  # key -> request
    configured: bool = False
    pause: bool = False

    def breaks(self) -> dict[str, set[int]]:
        out: dict[str, set[int]] = {}
        for key, req in self.config.items():
            if not key.startswith("setBreakpoints:"):
                continue
            args = req.get("arguments") or {}
            path = (args.get("source") or {}).get("path")
            lines = {int(b["line"]) for b in args.get("breakpoints") or []
                     if isinstance(b, dict) and isinstance(b.get("line"), int)}
            if isinstance(path, str) and lines:
                out[os.path.realpath(path)] = lines
        return out

    def needs_tracer(self) -> bool:
        """Breakpoints a hit-hook cannot serve: function breakpoints, raised exceptions."""
        fn = self.config.get("setFunctionBreakpoints")
        if fn and (fn.get("arguments") or {}).get("breakpoints"):
            return True
        exc = self.config.get("setExceptionBreakpoints")
        filters = set((exc or {}).get("arguments", {}).get("filters") or [])
        return bool(filters & _TRACED_FILTERS)

    def uncaught(self) -> bool:
        exc = self.config.get("setExceptionBreakpoints")
        if exc is None:
            return False  # as debugpy: no filter until the client sets one
        return "uncaught" in set((exc.get("arguments") or {}).get("filters") or [])


class Gate:
    """The debug endpoint of one chosen rank (see the module's docstring)."""

    def __init__(self, rank: int, host: str, port: int, cli_breaks: dict[str, set[int]],
                 notify: Notify) -> None:
        self.rank = rank
        self.cli_breaks = cli_breaks
        self.notify = notify
        self.lock = threading.RLock()
        self.adapter: tuple[str, int] | None = None  # set once the rank is traced
        self.session: _Session | None = None
        self.listener = _listen(host, port)
        self.host, self.port = self.listener.getsockname()[:2]
        self._closed = False

    def start(self) -> None:
        threading.Thread(target=self._accept, name=f"rankdebug-gate-{self.rank}",
                         daemon=True).start()

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(OSError):
            self.listener.close()
        session = self.session
        if session is not None:
            session.end()

    # --- what the rank is told ------------------------------------------------------

    def plan(self) -> dict[str, Any]:
        """The breakpoints and modes the rank runs with until it is traced."""
        with self.lock:
            said = self.session.said if self.session is not None else _Said()
            breaks = {p: set(lines) for p, lines in self.cli_breaks.items()}
            for path, lines in said.breaks().items():
                breaks.setdefault(path, set()).update(lines)
            return {
                "breaks": sorted([p, n] for p, lines in breaks.items() for n in lines),
                "trace": said.needs_tracer(),
                "uncaught": said.uncaught(),
                "pause": said.pause,
                "configured": said.configured,
            }

    def go_live(self, host: str, port: int) -> None:
        """The rank is connecting to its adapter at ``host:port``: relay from now on."""
        with self.lock:
            self.adapter = (host, port)
            session = self.session
        if session is not None:
            session.go_live(host, port)

    # --- clients --------------------------------------------------------------------

    def _accept(self) -> None:
        while not self._closed:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            if not peer.allowed(conn):
                _refuse(conn, "this rank belongs to another user")
                continue
            with self.lock:
                old = self.session
                busy = old is not None and not old.ended and old.spoke
                if old is not None and not busy:
                    old.end()  # a connection that said nothing yet (a scan) gives way
                if not busy:
                    self.session = _Session(self, conn)
            if busy:
                _refuse(conn, "this rank already has a debugger client")
                continue
            assert self.session is not None
            threading.Thread(target=self.session.run, name=f"rankdebug-gate-{self.rank}-client",
                             daemon=True).start()


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family)
    except OSError:
        if port == 0:
            raise
        return socket.create_server((host, 0), family=family)  # the port was taken meanwhile


def _refuse(conn: socket.socket, why: str) -> None:
    """Tell a client why it is turned away (DAP clients show an ``output`` event), then
    close."""
    with contextlib.suppress(OSError):
        conn.sendall(dapwire.encode(dapwire.event("output", {
            "category": "important", "output": f"rankdebug: {why}\n"})))
    with contextlib.suppress(OSError):
        conn.close()


class _Session:
    """One client connection: answered by the gate, then relayed to the adapter."""

    def __init__(self, gate: Gate, conn: socket.socket) -> None:
        self.gate = gate
        self.client = Endpoint(conn)
        self.adapter: Endpoint | None = None
        self.said = _Said()
        self.ended = False
        self.spoke = False  # the client has sent a message
        self.live = False
        self.replaying = False
        self._queue: list[dict[str, Any]] = []  # client messages held during a replay
        # adapter seq -> (client seq or None for the gate's own, breakpoints to keep or None)
        self._pending: dict[int, tuple[int | None, int | None]] = {}
        self._reverse: dict[int, int] = {}  # client-facing seq of an adapter request -> its seq
        self._cli_merged = False
        self._told: set[str] = set()  # sources whose breakpoints went to the adapter

    @property
    def lock(self) -> threading.RLock:
        return self.gate.lock

    # --- the client's side --------------------------------------------------------------

    def run(self) -> None:
        try:
            while True:
                msg = self.client.read()
                if msg is None:
                    break
                self._from_client(msg)
        finally:
            self.end()

    def _from_client(self, msg: dict[str, Any]) -> None:
        with self.lock:
            self.spoke = True
            # The rank is traced already: relay from this first message on. Not on connect:
            # a connection that says nothing (a port scan) never reaches debugpy's adapter,
            # which one such connection can leave accepting no one else.
            if not self.live and self.gate.adapter is not None:
                self.go_live(*self.gate.adapter)
            if self.replaying:
                self._queue.append(msg)
                return
            if self.live:
                self._forward(msg)
            elif msg.get("type") == "request":
                self._answer(msg)

    def _answer(self, req: dict[str, Any]) -> None:
        """The gate's own answer while the rank is untraced."""
        command = str(req.get("command", ""))
        args = req.get("arguments") or {}
        said = self.said
        if command == "initialize":
            said.initialize = req
            self.client.send(dapwire.response(req, CAPABILITIES))
        elif command == "attach":
            said.attach = req
            said.initialized_sent = True
            self.client.send(dapwire.event("initialized"))
        elif command == "launch":
            self.client.send(dapwire.response(
                req, message="this is a rank of a running job: use an attach request"))
        elif command in _CONFIG:
            self._record_config(req, command, args)
        elif command == "configurationDone":
            self._configured(req)
        elif command == "threads":
            self.client.send(dapwire.response(
                req, {"threads": [{"id": 1, "name": "MainThread"}]}))
        elif command in _EMPTY:  # views VS Code fills on its own: nothing loaded yet
            self.client.send(dapwire.response(req, _EMPTY[command]))
        elif command == "pause":
            said.pause = True
            self.client.send(dapwire.response(req))
            self.gate.notify("pause")
        elif command in ("disconnect", "terminate"):
            self.client.send(dapwire.response(req))
            if command == "terminate" or args.get("terminateDebuggee"):
                self.gate.notify("terminate")
            self.end()
        else:
            self.client.send(dapwire.response(
                req, message=f"rank {self.gate.rank} runs without a debugger until it reaches "
                "a breakpoint or is paused"))

    def _record_config(self, req: dict[str, Any], command: str, args: dict[str, Any]) -> None:
        said = self.said
        if command == "setBreakpoints":
            path = (args.get("source") or {}).get("path")
            key = f"setBreakpoints:{path}"
            body = {"breakpoints": [
                {"verified": True, "line": b.get("line")}
                for b in args.get("breakpoints") or [] if isinstance(b, dict)]}
        elif command == "setFunctionBreakpoints":
            key = command
            body = {"breakpoints": [{"verified": True} for _ in args.get("breakpoints") or []]}
        else:
            key = command
            body = {}
        said.config.pop(key, None)  # keep the order of the latest word per key
        said.config[key] = req
        self.client.send(dapwire.response(req, body))
        if said.configured:
            self.gate.notify("changed")

    def _configured(self, req: dict[str, Any]) -> None:
        said = self.said
        self.client.send(dapwire.response(req))
        if said.attach is not None and not said.attach_answered:
            said.attach_answered = True
            self.client.send(dapwire.response(said.attach))
        said.configured = True
        self.gate.notify("configured")

    # --- relaying -------------------------------------------------------------------

    def go_live(self, host: str, port: int) -> None:
        with self.lock:
            if self.live or self.ended:
                return
            try:
                sock = socket.create_connection((host, port), timeout=30.0)
            except OSError:
                self.end()
                return
            sock.settimeout(None)
            self.adapter = Endpoint(sock)
            self.live = True
            self.replaying = self.said.initialize is not None
            said = self.said
            if said.initialize is not None:
                self._send_adapter(said.initialize, None)
            if said.attach is not None:
                client_seq = None if said.attach_answered else said.attach.get("seq")
                self._send_adapter(said.attach, client_seq)
            if said.attach is None:
                self._end_replay()
        threading.Thread(target=self._from_adapter, name=f"rankdebug-gate-{self.gate.rank}-dap",
                         daemon=True).start()

    def _replay_config(self) -> None:
        """After the adapter's ``initialized``: the breakpoints and filters, then
        ``configurationDone`` if the client has said it."""
        for req in self.said.config.values():
            self._forward(req, own=True)
        if self.said.configured:
            self._merge_cli_sources()
            self._send_adapter({"type": "request", "command": "configurationDone"}, None)

    def _end_replay(self) -> None:
        self.replaying = False
        queued, self._queue = self._queue, []
        for msg in queued:
            self._forward(msg)

    def _send_adapter(self, msg: dict[str, Any], client_seq: int | None,
                      keep: int | None = None) -> None:
        assert self.adapter is not None
        body = {k: v for k, v in msg.items() if k != "seq"}
        seq = self.adapter.send(body)
        if seq and body.get("type") == "request":
            self._pending[seq] = (client_seq, keep)

    def _forward(self, msg: dict[str, Any], own: bool = False) -> None:
        """A client message to the adapter (``own``: a replayed one, answered already)."""
        kind = msg.get("type")
        if kind == "response":
            seq = self._reverse.pop(int(msg.get("request_seq", 0)), None)
            if seq is not None:
                self._send_adapter(dict(msg, request_seq=seq), None)
            return
        command = msg.get("command")
        keep: int | None = None
        if command == "setBreakpoints" and not self._cli_merged:
            msg, keep = self._with_cli_lines(msg)
        if command == "configurationDone" and not self._cli_merged:
            self._merge_cli_sources()
        self._send_adapter(msg, None if own else msg.get("seq"), keep)

    def _with_cli_lines(self, req: dict[str, Any]) -> tuple[dict[str, Any], int | None]:
        """``--break`` lines of this source added to the client's list (until the client has
        configured); the response is cut back to the client's own entries."""
        args = dict(req.get("arguments") or {})
        path = (args.get("source") or {}).get("path")
        if not isinstance(path, str):
            return req, None
        self._told.add(os.path.realpath(path))
        extra = self.gate.cli_breaks.get(os.path.realpath(path))
        if not extra:
            return req, None
        bps = list(args.get("breakpoints") or [])
        have = {b.get("line") for b in bps if isinstance(b, dict)}
        added = [{"line": n} for n in sorted(extra) if n not in have]
        args["breakpoints"] = bps + added
        return dict(req, arguments=args), len(bps)

    def _merge_cli_sources(self) -> None:
        """``setBreakpoints`` for ``--break`` files the client sent nothing for."""
        self._cli_merged = True
        for path, lines in self.gate.cli_breaks.items():
            if path in self._told:
                continue
            self._send_adapter({"type": "request", "command": "setBreakpoints", "arguments": {
                "source": {"path": path}, "breakpoints": [{"line": n} for n in sorted(lines)]}},
                None)

    def _from_adapter(self) -> None:
        adapter = self.adapter
        assert adapter is not None
        while True:
            msg = adapter.read()
            if msg is None:
                break
            with self.lock:
                self._to_client(msg)
        self.end()

    def _to_client(self, msg: dict[str, Any]) -> None:
        kind = msg.get("type")
        if kind == "response":
            entry = self._pending.pop(int(msg.get("request_seq", 0)), None)
            if entry is None or entry[0] is None:
                if self.replaying and msg.get("command") == "configurationDone":
                    self._end_replay()
                return  # the gate's own request
            client_seq, keep = entry
            out = dict(msg, request_seq=client_seq)
            if keep is not None and isinstance(out.get("body"), dict):
                body = dict(out["body"])
                body["breakpoints"] = list(body.get("breakpoints") or [])[:keep]
                out["body"] = body
            self.client.send(out)
            if self.replaying and msg.get("command") == "attach" and not self.said.configured:
                self._end_replay()
            return
        if (kind == "event" and msg.get("event") == "initialized"
                and (self.replaying or self.said.initialized_sent)):
            self._replay_config()  # the client had its own "initialized" from the gate
            if not self.said.configured:
                self._end_replay()
            return
        if kind == "request":
            seq = self.client.send(msg)
            if seq:
                self._reverse[seq] = int(msg.get("seq", 0))
            return
        self.client.send(msg)

    def end(self) -> None:
        with self.lock:
            if self.ended:
                return
            self.ended = True
        self.client.close()
        if self.adapter is not None:
            self.adapter.close()
        self.gate.notify("disconnected")

"""One client of a gate (see ``gate``): answered by the gate while its rank runs untraced,
then relayed to debugpy's adapter, with ``seq`` renumbered both ways."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable
from typing import Any, Protocol

from rankdebug.supervise import dapwire
from rankdebug.supervise.dapwire import Endpoint
from rankdebug.supervise.gate_said import CAPABILITIES, CONFIG, EMPTY, Said


class GateSide(Protocol):
    """What a session needs of its gate."""

    rank: int
    lock: threading.RLock
    adapter: tuple[str, int] | None
    idle: threading.Event  # set while no session talks to the adapter
    cli_breaks: dict[str, set[int]]
    notify: Callable[[str], None]


class ClientSession:
    """One client connection: answered by the gate, then relayed to the adapter."""

    def __init__(self, gate: GateSide, conn: socket.socket) -> None:
        self.gate = gate
        self.client = Endpoint(conn)
        self.adapter: Endpoint | None = None
        self.said = Said()
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
        self._said_disconnect = False  # the client ended its session itself
        self._let_go = threading.Event()  # the adapter answered the gate's disconnect

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
        if not self.live and self.gate.adapter is not None:
            # The session before this one must have let go of the adapter first: debugpy
            # gives a new client the rank only once the last one has disconnected.
            self.gate.idle.wait(5.0)
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
            self.client.send(dapwire.event("initialized"))
        elif command == "launch":
            self.client.send(dapwire.response(
                req, message="this is a rank of a running job: use an attach request"))
        elif command in CONFIG:
            self._record_config(req, command, args)
        elif command == "configurationDone":
            self._configured(req)
        elif command == "threads":
            self.client.send(dapwire.response(
                req, {"threads": [{"id": 1, "name": "MainThread"}]}))
        elif command in EMPTY:  # views VS Code fills on its own: nothing loaded yet
            self.client.send(dapwire.response(req, EMPTY[command]))
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
            self.gate.idle.clear()
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
        if command == "disconnect":
            self._said_disconnect = True
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
        self._let_go.set()
        self.end()

    def _to_client(self, msg: dict[str, Any]) -> None:
        kind = msg.get("type")
        if kind == "response":
            entry = self._pending.pop(int(msg.get("request_seq", 0)), None)
            if entry is None or entry[0] is None:
                if self.replaying and msg.get("command") == "configurationDone":
                    self._end_replay()
                if msg.get("command") == "disconnect":
                    self._let_go.set()
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
                and (self.replaying or self.said.attach is not None)):
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
            vanished = self.adapter is not None and not self._said_disconnect
            if vanished:
                # The client went without a word (its editor crashed): end its debugpy
                # session as a client would, so that the rank runs on and the next client
                # gets it.
                self._send_adapter({"type": "request", "command": "disconnect", "arguments": {
                    "restart": False, "terminateDebuggee": False}}, None)
        self.client.close()
        if self.adapter is not None:
            if vanished:
                self._let_go.wait(3.0)
            self.adapter.close()
            self.gate.idle.set()
        self.gate.notify("disconnected")

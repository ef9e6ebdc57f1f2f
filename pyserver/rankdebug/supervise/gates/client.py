"""One client of a gate (see ``gate``): answered by the gate while its rank runs untraced,
then relayed to debugpy's adapter, with ``seq`` renumbered both ways."""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass
from typing import Any

from rankdebug.runtime import bound_breaks
from rankdebug.supervise.gates import dapwire
from rankdebug.supervise.gates.cli_lines import CliLines
from rankdebug.supervise.gates.dapwire import Endpoint
from rankdebug.supervise.gates.said import Said
from rankdebug.supervise.gates.shown_waiting import ShownWaiting
from rankdebug.supervise.gates.side import Answer, GateSide
from rankdebug.supervise.gates.untraced import Untraced
from rankdebug.supervise.gates.waiting import WaitFrame

# A client's requests that set its rank running.
RESUMING = frozenset({"continue", "next", "stepIn", "stepOut", "goto"})


@dataclass
class _Pending:
    """A request sent to the adapter: whose it is and how its answer goes back."""

    client_seq: int | None  # None: the gate's own (answered, or not wanted, by the gate)
    mapping: bound_breaks.Mapping | None = None  # setBreakpoints: entries bound to other ranks
    count: int | None = None  # setBreakpoints: the client's own entries (--break lines cut)
    answer: Answer | None = None  # the gate's own request: who wants the response


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
        self._own: list[tuple[dict[str, Any], _Pending]] = []  # the gate's, held likewise
        self._pending: dict[int, _Pending] = {}  # adapter seq -> its request's owner
        self._reverse: dict[int, int] = {}  # client-facing seq of an adapter request -> its seq
        self._cli = CliLines(gate)
        self._untraced = Untraced(gate, self.client, self.said, self.end)
        self._said_disconnect = False  # the client ended its session itself
        self._let_go = threading.Event()  # the adapter answered the gate's disconnect
        self._shown = ShownWaiting(self)

    @property
    def lock(self) -> threading.RLock:
        return self.gate.lock

    # --- the client's side --------------------------------------------------------------

    def run(self) -> None:
        try:
            while True:
                msg = self.client.read()  # None too where it is not the base protocol
                if msg is None:
                    break
                self._checked(msg)
        finally:
            self.end()

    def _checked(self, msg: dict[str, Any]) -> None:
        """One client message, checked first; a request that cannot be carried out gets a
        failed response, and nothing it sends can end the session's thread."""
        wrong = dapwire.problem(msg)
        if wrong is not None:
            self.client.send(dapwire.response(msg, message=f"not a DAP message: {wrong}"))
            return
        try:
            self._from_client(msg)
        except Exception as exc:  # a request whose arguments are not what DAP says
            if msg.get("type") == "request":
                self.client.send(dapwire.response(
                    msg, message=f"bad {msg.get('command')} request: {type(exc).__name__}"))

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
            if self._shown.waiting is not None and msg.get("type") == "request" and \
                    self._shown.answer(msg):
                return
            if self.live:
                self._forward(msg)
            elif msg.get("type") == "request":
                self._untraced.answer(msg)  # the gate's own answer while untraced

    # --- a rank shown paused while it waits in native code (shown_waiting) --------------

    def show_waiting(self, what: str, frames: list[WaitFrame]) -> bool:
        """Show the client its rank paused, waiting in ``what``; False: no client to show."""
        return self._shown.show(what, frames)

    def release_waiting(self) -> bool:
        """Continue a rank shown waiting: its pause is called off."""
        return self._shown.let_go()

    # --- relaying -------------------------------------------------------------------

    def go_live(self, host: str, port: int) -> None:
        with self.lock:
            if self.live or self.ended:
                return
            try:
                sock = _connect(host, port)
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
        own, self._own = self._own, []
        for msg, pending in own:
            self._send_adapter(msg, None, pending)

    def _send_adapter(self, msg: dict[str, Any], client_seq: int | None,
                      pending: _Pending | None = None) -> None:
        assert self.adapter is not None
        body = {k: v for k, v in msg.items() if k != "seq"}
        seq = self.adapter.send(body)
        if seq and body.get("type") == "request":
            self._pending[seq] = pending or _Pending(client_seq)

    def request(self, command: str, args: dict[str, Any], answer: Answer | None = None
                ) -> bool:
        """The gate's own request to the adapter (group commands, where a rank stopped);
        False when the rank has no live session to carry it."""
        with self.lock:
            if not self.live or self.ended or self.adapter is None:
                return False
            if command == "pause":
                self._shown.release = False  # paused again before its last pause landed
            msg = {"type": "request", "command": command, "arguments": args}
            if self.replaying:
                self._own.append((msg, _Pending(None, answer=answer)))
            else:
                self._send_adapter(msg, None, _Pending(None, answer=answer))
            return True

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
        if command == "pause":
            self._shown.release = False
        if command in RESUMING and not own:
            self.gate.notify("resumed")  # debugpy says "continued" only now and then
        client_seq = None if own else msg.get("seq")
        pending = _Pending(client_seq)
        if command == "setBreakpoints":
            if not own:  # a replayed one is the rank's view already
                args, pending.mapping = bound_breaks.for_rank(
                    msg.get("arguments") or {}, self.gate.rank, self.gate.local_rank)
                msg = dict(msg, arguments=args)
                self.said.config.pop(f"setBreakpoints:{self._path_of(msg)}", None)
                self.said.config[f"setBreakpoints:{self._path_of(msg)}"] = msg
            if not self._cli.merged:
                msg, pending.count = self._cli.added(msg)
        if command == "configurationDone":
            self.said.configured = True  # a client relayed from its first message
            if not self._cli.merged:
                self._merge_cli_sources()
        self._send_adapter(msg, client_seq, pending)

    @staticmethod
    def _path_of(req: dict[str, Any]) -> object:
        return ((req.get("arguments") or {}).get("source") or {}).get("path")

    def _merge_cli_sources(self) -> None:
        """``setBreakpoints`` for ``--break`` files the client sent nothing for."""
        for req in self._cli.the_rest():
            self._send_adapter(req, None)

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
            if entry is None or entry.client_seq is None:
                if self.replaying and msg.get("command") == "configurationDone":
                    self._end_replay()
                if msg.get("command") == "disconnect":
                    self._let_go.set()
                if entry is not None and entry.answer is not None:
                    entry.answer(msg)
                return  # the gate's own request
            out = dict(msg, request_seq=entry.client_seq)
            if msg.get("command") == "setBreakpoints" and isinstance(out.get("body"), dict):
                out["body"] = bound_breaks.client_body(out["body"], entry.mapping, entry.count)
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
        if kind == "event" and not self._on_adapter_event(msg):
            return
        self.client.send(msg)

    def _on_adapter_event(self, msg: dict[str, Any]) -> bool:
        """Note an event of the adapter's; False: the client is not to see it."""
        name = msg.get("event")
        body = dict(msg.get("body") or {})
        if name == "stopped" and not self._shown.stopped(body):
            return False
        if name in ("stopped", "continued"):
            self.gate.notify(str(name), body)
        return True

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


def _connect(host: str, port: int) -> socket.socket:
    """The adapter's endpoint: ``host:port``, or a socket path (another node's adapter,
    through the SSH connection: ``supervise.nodes.remote``)."""
    if not host.startswith("/"):
        return socket.create_connection((host, port), timeout=30.0)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(30.0)
    try:
        sock.connect(host)
    except OSError:
        sock.close()
        raise
    return sock

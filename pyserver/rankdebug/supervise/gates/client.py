"""One client of a gate (see ``gate``): answered by the gate while its rank runs untraced,
then relayed to debugpy's adapter, with ``seq`` renumbered both ways."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from rankdebug.runtime import bound_breaks
from rankdebug.supervise.gates import dapwire
from rankdebug.supervise.gates.dapwire import Endpoint
from rankdebug.supervise.gates.said import CAPABILITIES, CONFIG, EMPTY, Said
from rankdebug.supervise.gates.waiting import WaitFrame, Waiting, main_thread

Answer = Callable[[dict[str, Any]], None]
# A client's requests that set its rank running.
RESUMING = frozenset({"continue", "next", "stepIn", "stepOut", "goto"})


@dataclass
class _Pending:
    """A request sent to the adapter: whose it is and how its answer goes back."""

    client_seq: int | None  # None: the gate's own (answered, or not wanted, by the gate)
    mapping: bound_breaks.Mapping | None = None  # setBreakpoints: entries bound to other ranks
    count: int | None = None  # setBreakpoints: the client's own entries (--break lines cut)
    answer: Answer | None = None  # the gate's own request: who wants the response


class GateSide(Protocol):
    """What a session needs of its gate."""

    rank: int
    local_rank: int | None
    lock: threading.RLock
    adapter: tuple[str, int] | None
    idle: threading.Event  # set while no session talks to the adapter
    cli_breaks: dict[str, set[int]]
    held: bool  # paused by the job (stop together) while untraced

    def notify(self, what: str, info: dict[str, Any] | None = None) -> None: ...


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
        self._cli_merged = False
        self._told: set[str] = set()  # sources whose breakpoints went to the adapter
        self._said_disconnect = False  # the client ended its session itself
        self._let_go = threading.Event()  # the adapter answered the gate's disconnect
        self.waiting: Waiting | None = None  # shown paused while it waits in native code
        self._stops = 0  # debugpy's stopped events so far
        self._release = False  # continue the rank where its pending pause lands (unshown)
        self._showing = False  # shown waiting once the adapter names its main thread

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
            if self.waiting is not None and msg.get("type") == "request" and \
                    self._answer_waiting(msg):
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
            mine, mapping = bound_breaks.for_rank(args, self.gate.rank, self.gate.local_rank)
            req = dict(req, arguments=mine)  # what the rank runs with, and what is replayed
            body = bound_breaks.client_body({"breakpoints": [
                {"verified": True, "line": b.get("line")}
                for b in mine.get("breakpoints") or [] if isinstance(b, dict)]}, mapping, None)
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

    # --- a rank shown paused while it waits in native code (gate_waiting) ----------------

    def show_waiting(self, what: str, frames: list[WaitFrame]) -> bool:
        """Show the client its rank paused, waiting in ``what``; False: no client to show."""
        with self.lock:
            if self.ended or not self.said.configured or self.replaying:
                return False
            if self._just_my_code():
                frames = [f for f in frames if not f.library] or frames
            self._showing = True
            if not self.live:
                self._show(Waiting(self.gate.rank, 1, what, frames), self._stops)
                return True
            stops = self._stops
            return self.request("threads", {}, lambda resp: self._show(
                Waiting(self.gate.rank, main_thread(resp, None), what, frames), stops))

    def _just_my_code(self) -> bool:
        """As debugpy: library frames are hidden unless the client said otherwise."""
        args = (self.said.attach or {}).get("arguments") or {}
        return args.get("justMyCode", True) is not False

    def _show(self, waiting: Waiting, stops: int) -> None:
        with self.lock:
            showing, self._showing = self._showing, False
            if self.ended or stops != self._stops or not showing:
                return  # it stopped for real meanwhile, or was continued
            self.waiting = waiting
            self.client.send(dapwire.event("stopped", waiting.stopped_event_body()))

    def release_waiting(self) -> bool:
        """Continue a rank shown waiting: its pause is called off."""
        with self.lock:
            waiting, self.waiting = self.waiting, None
            showing, self._showing = self._showing, False  # not shown yet: it never will be
            if waiting is None and not showing:
                return False
            if self.live:
                # Not "continue" now: debugpy answers it only once a thread it stopped runs
                # again, and this one never stopped (its pause waits for the native call to
                # return); until that answer its adapter answers nothing else, so the rank
                # could never be paused or stepped again. The pause lands when the call
                # returns: the rank is continued there, unseen (``_on_adapter_event``).
                self._release = True
            else:
                self.gate.held = False
            if waiting is not None:
                self.client.send(dapwire.event("continued", {
                    "threadId": waiting.thread, "allThreadsContinued": True}))
            return True

    def _answer_waiting(self, req: dict[str, Any]) -> bool:
        waiting = self.waiting
        assert waiting is not None
        if req.get("command") == "continue":
            self.release_waiting()
            self.client.send(dapwire.response(req, {"allThreadsContinued": True}))
            self.gate.notify("resumed")
            return True
        handled, body, error = waiting.answer(req)
        if handled:
            self.client.send(dapwire.response(req, body) if error is None
                             else dapwire.response(req, message=error))
        return handled

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
                self._release = False  # paused again before its last pause landed: show it
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
            self._release = False
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
            if not self._cli_merged:
                msg, pending.count = self._with_cli_lines(msg)
        if command == "configurationDone":
            self.said.configured = True  # a client relayed from its first message
            if not self._cli_merged:
                self._merge_cli_sources()
        self._send_adapter(msg, client_seq, pending)

    @staticmethod
    def _path_of(req: dict[str, Any]) -> object:
        return ((req.get("arguments") or {}).get("source") or {}).get("path")

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
        args["breakpoints"] = bound_breaks.with_lines(bps, extra)
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
        if name == "stopped":
            self._stops += 1
            self.waiting, self._showing = None, False  # stopped for real: debugpy's frames
            if self._release and body.get("reason") == "pause":
                # The pause of a rank continued while it was shown waiting: it runs on.
                self._release = False
                self.request("continue", {"threadId": body.get("threadId") or 0})
                return False
            self._release = False
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

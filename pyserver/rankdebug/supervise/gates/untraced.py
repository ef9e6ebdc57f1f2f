"""The gate's own answers to a client while its rank runs untraced: the handshake, the
configuration (recorded in ``Said`` to be replayed to debugpy's adapter once the rank is
traced), a pause (which makes the rank attach) and the end; anything else is refused with a
sentence saying why."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rankdebug.runtime import bound_breaks
from rankdebug.supervise.gates import dapwire
from rankdebug.supervise.gates.dapwire import Endpoint
from rankdebug.supervise.gates.said import CAPABILITIES, CONFIG, EMPTY, Said
from rankdebug.supervise.gates.side import GateSide


class Untraced:
    """Answers one client's requests while no debugger runs in its rank."""

    def __init__(self, gate: GateSide, client: Endpoint, said: Said,
                 end: Callable[[], None]) -> None:
        self.gate = gate
        self.client = client
        self.said = said
        self.end = end  # ends the client's session

    def answer(self, req: dict[str, Any]) -> None:
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

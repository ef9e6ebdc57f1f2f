"""A small Debug Adapter Protocol client over TCP, for tests (what VS Code does, minus the UI)."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from typing import Any


class DAPError(RuntimeError):
    pass


class DAPClient:
    """One connection to a debug adapter: requests, their responses, and events."""

    def __init__(self, host: str, port: int, timeout: float = 30.0) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.settimeout(None)
        self._seq = 0
        self._lock = threading.Condition()
        self.responses: dict[int, dict[str, Any]] = {}
        self.events: list[dict[str, Any]] = []
        self.closed = False
        self._reader = threading.Thread(target=self._read, name="dap-reader", daemon=True)
        self._reader.start()

    # --- wire -------------------------------------------------------------------------

    def _read(self) -> None:
        f = self.sock.makefile("rb")
        try:
            while True:
                length = None
                while True:
                    line = f.readline()
                    if not line:
                        return
                    line = line.strip()
                    if not line:
                        break
                    name, _, value = line.decode().partition(":")
                    if name.lower() == "content-length":
                        length = int(value)
                if length is None:
                    continue
                msg = json.loads(f.read(length))
                with self._lock:
                    if msg.get("type") == "response":
                        self.responses[msg["request_seq"]] = msg
                    elif msg.get("type") == "event":
                        self.events.append(msg)
                    self._lock.notify_all()
        except (OSError, ValueError):
            return
        finally:
            with self._lock:
                self.closed = True
                self._lock.notify_all()

    def send(self, command: str, arguments: dict[str, Any] | None = None) -> int:
        with self._lock:
            self._seq += 1
            seq = self._seq
        body: dict[str, Any] = {"seq": seq, "type": "request", "command": command}
        if arguments is not None:
            body["arguments"] = arguments
        data = json.dumps(body).encode()
        self.sock.sendall(b"Content-Length: %d\r\n\r\n" % len(data) + data)
        return seq

    def response(self, seq: int, timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self._lock:
            while seq not in self.responses:
                left = deadline - time.monotonic()
                if left <= 0 or self.closed:
                    raise DAPError(f"no response to request {seq}")
                self._lock.wait(left)
            msg = self.responses.pop(seq)
        if not msg.get("success"):
            raise DAPError(f"{msg.get('command')} failed: {msg.get('message')}")
        return msg

    def request(self, command: str, arguments: dict[str, Any] | None = None,
                timeout: float = 30.0) -> dict[str, Any]:
        msg = self.response(self.send(command, arguments), timeout)
        body: dict[str, Any] = msg.get("body") or {}
        return body

    def wait_event(self, name: str, timeout: float = 30.0, after: int = 0) -> dict[str, Any]:
        """The first event called ``name`` at index >= ``after`` (waiting up to ``timeout``)."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                for ev in self.events[after:]:
                    if ev.get("event") == name:
                        return ev
                left = deadline - time.monotonic()
                if left <= 0 or self.closed:
                    got = [e.get("event") for e in self.events]
                    raise DAPError(f"no {name!r} event (got {got})")
                self._lock.wait(left)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()

    # --- a debugging session ----------------------------------------------------------

    def attach(self, breakpoints: dict[str, list[int]], timeout: float = 60.0,
               exceptions: list[str] | None = None) -> None:
        """initialize, attach, setBreakpoints per file, setExceptionBreakpoints (with
        ``exceptions``), configurationDone (VS Code's order)."""
        self.request("initialize", {
            "clientID": "rankdebug-tests", "adapterID": "debugpy", "pathFormat": "path",
            "linesStartAt1": True, "columnsStartAt1": True, "supportsRunInTerminalRequest": False,
        })
        attach_seq = self.send("attach", {"justMyCode": True})
        self.wait_event("initialized", timeout)
        for path, lines in breakpoints.items():
            self.request("setBreakpoints", {
                "source": {"path": path}, "breakpoints": [{"line": n} for n in lines],
            })
        if exceptions is not None:
            self.request("setExceptionBreakpoints", {"filters": exceptions})
        self.request("configurationDone", {}, timeout)
        self.response(attach_seq, timeout)

    def stopped(self, timeout: float = 60.0, after: int = 0) -> dict[str, Any]:
        body: dict[str, Any] = self.wait_event("stopped", timeout, after)["body"]
        return body

    def top_frame(self, thread_id: int) -> dict[str, Any]:
        frames = self.request("stackTrace", {"threadId": thread_id, "levels": 1})["stackFrames"]
        frame: dict[str, Any] = frames[0]
        return frame

    def evaluate(self, expression: str, frame_id: int) -> str:
        body = self.request("evaluate", {"expression": expression, "frameId": frame_id,
                                         "context": "repl"})
        return str(body["result"])

    def cont(self, thread_id: int) -> None:
        self.request("continue", {"threadId": thread_id})

    def disconnect(self, terminate: bool = False) -> None:
        with contextlib.suppress(DAPError):
            self.request("disconnect", {"terminateDebuggee": terminate}, timeout=10.0)
        self.close()

"""The Debug Adapter Protocol's base protocol: ``Content-Length`` framed JSON messages."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
from typing import IO, Any

from rankdebug.runtime import marks
from rankdebug.runtime.tcp import no_delay

TRACED = bool(os.environ.get("RANKDEBUG_TRACE_FILE"))  # every message's time (``marks``)
MAX_MESSAGE = 64 * 1024 * 1024  # a stack or a variable listing is far smaller


class DapWireError(ValueError):
    pass


def read(f: IO[bytes]) -> dict[str, Any] | None:
    """The next message from ``f``; None at the end of the stream. Raises DapWireError for
    anything that is not the base protocol (the connection is then unusable)."""
    length: int | None = None
    while True:
        line = f.readline(4096)
        if not line:
            return None
        line = line.strip()
        if not line:
            if length is None:
                continue  # blank lines between messages
            break
        name, sep, value = line.decode("ascii", "replace").partition(":")
        if not sep:
            raise DapWireError(f"not a header line: {line[:80]!r}")
        if name.strip().lower() == "content-length":
            try:
                length = int(value.strip())
            except ValueError:
                raise DapWireError(f"bad Content-Length: {value[:40]!r}") from None
            if not 0 < length <= MAX_MESSAGE:
                raise DapWireError(f"Content-Length out of range: {length}")
    body = f.read(length)
    if len(body) < length:
        return None
    try:
        msg = json.loads(body)
    except ValueError as exc:
        raise DapWireError(f"not JSON: {exc}") from None
    except RecursionError:
        raise DapWireError("nested too deeply") from None
    if not isinstance(msg, dict):
        raise DapWireError("a message must be a JSON object")
    return msg


_KINDS: dict[str, tuple[tuple[str, type | tuple[type, ...]], ...]] = {
    "request": (("command", str),),
    "response": (("request_seq", int), ("command", str), ("success", bool)),
    "event": (("event", str),),
}


def problem(msg: dict[str, Any]) -> str | None:
    """What makes ``msg`` no DAP message (the base protocol's fields, read before anything
    acts on it), or None. ``arguments`` and ``body`` must be objects where given."""
    kind = msg.get("type")
    if not isinstance(kind, str) or kind not in _KINDS:
        return f"type must be request, response or event, not {str(kind)[:40]!r}"
    if not isinstance(msg.get("seq"), int) or isinstance(msg.get("seq"), bool):
        return "seq must be a number"
    for name, want in _KINDS[kind]:
        value = msg.get(name)
        if not isinstance(value, want) or (want is int and isinstance(value, bool)):
            return f"a {kind} needs {name}"
    for name in ("arguments", "body"):
        if name in msg and msg[name] is not None and not isinstance(msg[name], dict):
            return f"{name} must be an object"
    return None


def encode(msg: dict[str, Any]) -> bytes:
    data = json.dumps(msg, separators=(",", ":")).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(data) + data


class Endpoint:
    """One side of a DAP connection: framed writes under a lock, and this side's ``seq``."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        no_delay(sock)
        self.file = sock.makefile("rb")
        self._lock = threading.Lock()
        self._seq = 0
        self.closed = False

    def send(self, msg: dict[str, Any]) -> int:
        """Send ``msg`` with the next ``seq`` of this connection; returns that seq (0 when the
        connection is gone)."""
        with self._lock:
            if self.closed:
                return 0
            self._seq += 1
            msg = dict(msg, seq=self._seq)
            if TRACED:
                _mark(">", self, msg)
            try:
                self.sock.sendall(encode(msg))
            except OSError:
                self.closed = True
                return 0
            return self._seq

    def read(self) -> dict[str, Any] | None:
        try:
            msg = read(self.file)
        except (OSError, DapWireError):
            return None
        if TRACED and msg is not None:
            _mark("<", self, msg)
        return msg

    def close(self) -> None:
        self.closed = True
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes a thread blocked reading it
        with contextlib.suppress(OSError):
            self.sock.close()
        with contextlib.suppress(OSError):
            self.file.close()


def _mark(way: str, end: Endpoint, msg: dict[str, Any]) -> None:
    what = msg.get("command") or msg.get("event") or ""
    marks.mark(f"dap {id(end) % 10000}", f"{way} {msg.get('type')} {what}")


def response(request: dict[str, Any], body: dict[str, Any] | None = None,
             message: str | None = None) -> dict[str, Any]:
    """The response to ``request``: success with ``body``, or a failure with ``message``."""
    seq, command = request.get("seq"), request.get("command")
    out: dict[str, Any] = {
        "type": "response", "success": message is None,
        "request_seq": seq if isinstance(seq, int) and not isinstance(seq, bool) else 0,
        "command": command if isinstance(command, str) else ""}
    if message is not None:
        out["message"] = message
        out["body"] = {"error": {"id": 1, "format": message, "showUser": False}}
    elif body is not None:
        out["body"] = body
    return out


def event(name: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "event", "event": name}
    if body is not None:
        out["body"] = body
    return out

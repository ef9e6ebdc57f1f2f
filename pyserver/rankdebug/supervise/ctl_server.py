"""The job's control socket (``ctl.sock``): ranks report on it and clients send commands
(``protocol.ctl`` says what each may carry). Each connection is read on a thread of its own and
its lines are put on the supervisor's queue as ``("msg", cid, msg)``, ``("bad", cid,
error)`` (not a JSON object: answered, nothing else) and ``("eof", cid, None)``; answers go
back on the same connection (``reply``). Only the job's owner is served (``SO_PEERCRED``),
even were the socket's mode loosened."""

from __future__ import annotations

import contextlib
import os
import queue
import socket
from typing import Any

from rankdebug.protocol import ctl as ctl_wire
from rankdebug.runtime import peercred, wire
from rankdebug.runtime.serve import Door, Loop, Server

Events = queue.Queue[tuple[str, int, dict[str, Any] | None]]


class CtlServer:
    def __init__(self, path: str, events: Events) -> None:
        self.path = path
        self.events = events
        self._socks: dict[int, socket.socket] = {}
        self._server: Server | None = None

    def open(self) -> None:
        """Listen (owner only); ranks may connect from now, they are served from ``serve``."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(self.path)
        os.chmod(self.path, 0o600)
        sock.listen(64)
        # Group commands drive the owner's ranks: the owner alone, by the kernel's word.
        self._server = Server(sock, self._read,
                              Loop(name="rankdebug-ctl", threads="rankdebug-ctl-{n}"),
                              Door(admit=peercred.same_user))

    def serve(self) -> None:
        assert self._server is not None
        self._server.start()

    def reply(self, cid: int, body: dict[str, Any]) -> None:
        sock = self._socks.get(cid)
        if sock is not None:
            with contextlib.suppress(OSError):
                wire.send(sock, body)

    def close(self) -> None:
        if self._server is not None:
            self._server.stop()

    def _read(self, conn: socket.socket, cid: int) -> None:
        self._socks[cid] = conn
        with conn, conn.makefile("rb") as f:
            for msg in wire.lines(f):
                if isinstance(msg, str):
                    self.events.put(("bad", cid, ctl_wire.error(msg)))
                else:
                    self.events.put(("msg", cid, msg))
        self._socks.pop(cid, None)
        self.events.put(("eof", cid, None))

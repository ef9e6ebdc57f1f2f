"""TCP_NODELAY on the debugger's connections.

DAP messages are small and often come in pairs within one round trip (a response, then the
``continued`` and ``stopped`` events of a step), and pydevd writes each message's header and
body apart. With Nagle's algorithm the second write waits for the peer's delayed ACK, about
40 ms, at every request of a stop and every step; plain debugpy pays that. Every socket of
ours that carries DAP sends at once."""

from __future__ import annotations

import contextlib
import socket


def no_delay(sock: socket.socket) -> None:
    if sock.family in (socket.AF_INET, socket.AF_INET6):  # a Unix socket has no Nagle
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

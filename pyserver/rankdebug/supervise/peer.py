"""Who is on the other end of a loopback TCP connection: the kernel's socket table names the
owner of the connecting socket (``/proc/net/tcp``, ``tcp6``), which is how a debug port on
127.0.0.1 tells its owner from another user of the same machine."""

from __future__ import annotations

import os
import socket
import struct


def _hex_addr(host: str, port: int) -> str:
    """``host:port`` as /proc/net/tcp{,6} writes it: each 32-bit word of the address as the
    kernel holds it, printed as a native integer."""
    if ":" in host:
        raw = socket.inet_pton(socket.AF_INET6, host.split("%", maxsplit=1)[0])
        words = struct.unpack("=4I", raw)
        return "".join(f"{w:08X}" for w in words) + f":{port:04X}"
    (value,) = struct.unpack("=I", socket.inet_aton(host))
    return f"{value:08X}:{port:04X}"


def peer_uid(conn: socket.socket) -> int | None:
    """The uid owning the socket at the other end of ``conn`` (an accepted loopback TCP
    connection); None when the table does not show it (not local, or gone)."""
    try:
        peer = conn.getpeername()[:2]
        mine = conn.getsockname()[:2]
    except OSError:
        return None
    want_local = _hex_addr(str(peer[0]), int(peer[1]))
    want_remote = _hex_addr(str(mine[0]), int(mine[1]))
    tables = ("/proc/net/tcp6",) if ":" in str(peer[0]) else ("/proc/net/tcp",)
    for table in tables:
        try:
            with open(table) as f:
                next(f, None)
                for line in f:
                    parts = line.split()
                    if len(parts) > 7 and parts[1] == want_local and parts[2] == want_remote:
                        return int(parts[7])
        except OSError:
            continue
    return None


def allowed(conn: socket.socket) -> bool:
    """Only the job's owner (and root, who could read the rank's memory anyway) gets in."""
    uid = peer_uid(conn)
    return uid is not None and uid in (os.getuid(), 0)

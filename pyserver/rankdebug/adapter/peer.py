"""Who is on the other end of a loopback TCP connection: the kernel's socket table names the
owner of the connecting socket (``/proc/net/tcp``, ``tcp6``), which is how a debug port on
127.0.0.1 tells its owner from another user of the same machine."""

from __future__ import annotations

import os
import socket
import struct

from rankdebug.runtime import proc


def _hex_addr(host: str, port: int) -> str:
    """``host:port`` as /proc/net/tcp{,6} writes it: each 32-bit word of the address as the
    kernel holds it, printed as a native integer."""
    if ":" in host:
        raw = socket.inet_pton(socket.AF_INET6, host.split("%", maxsplit=1)[0])
        words = struct.unpack("=4I", raw)
        return "".join(f"{w:08X}" for w in words) + f":{port:04X}"
    (value,) = struct.unpack("=I", socket.inet_aton(host))
    return f"{value:08X}:{port:04X}"


def peer_uid(conn: socket.socket, tries: int = 5) -> int | None:
    """The uid owning the socket at the other end of ``conn`` (an accepted loopback TCP
    connection); None when the table does not show it (not local, or gone)."""
    try:
        peer = conn.getpeername()[:2]
        mine = conn.getsockname()[:2]
    except OSError:
        return None
    want = (_hex_addr(str(peer[0]), int(peer[1])), _hex_addr(str(mine[0]), int(mine[1])))
    v6 = ":" in str(peer[0])
    wanted = (want[0].encode(), want[1].encode())
    # Read whole in one go, and again if the entry is missing (it may have moved).
    for _ in range(tries):
        for parts in proc.tcp_rows(v6):
            if len(parts) > 7 and (parts[1], parts[2]) == wanted:
                return int(parts[7])
    return None


def allowed(conn: socket.socket) -> bool:
    """Only the job's owner (and root, who could read the rank's memory anyway) gets in."""
    uid = peer_uid(conn)
    return uid is not None and uid in (os.getuid(), 0)

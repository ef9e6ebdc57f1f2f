"""Who is at the other end of a Unix socket: the kernel's word (``SO_PEERCRED``), so a
control socket can close on any user but the job's owner even if its file mode were loosened.
Pure Python, 3.9 and later."""

from __future__ import annotations

import os
import socket
import struct


def same_user(conn: socket.socket) -> bool:
    """True when the peer of Unix socket ``conn`` runs as this process's user."""
    peercred = getattr(socket, "SO_PEERCRED", None)
    if peercred is None:
        return True  # not Linux: the 0600 file and 0700 folder are the guard
    try:
        data = conn.getsockopt(socket.SOL_SOCKET, peercred, struct.calcsize("3i"))
    except OSError:
        return False
    _pid, uid, _gid = struct.unpack("3i", data)
    return bool(uid == os.getuid())

"""``/proc`` read in one place: a file whole or its head (raw ``os.open``/``os.read``, no
buffering), the pids, a process's environment, the kernel's TCP socket tables. Each returns
None (or nothing) for a process that vanished or may not be read, never raises.

Stdlib only, Python 3.9 and later: the rank side, the supervisor (``supervise/procs``), the
adapter's owner check (``adapter/peer``) and the job scan (``jobs/procfs``) all read through
here; ``procstat`` reads ``/proc/PID/stat``.
"""

from __future__ import annotations

import os

TCP_TABLE_LIMIT = 1 << 26  # a socket table of a busy host can be tens of MB


def read(path: str, limit: int = 1 << 22) -> bytes | None:
    """The whole file (up to ``limit`` bytes), or None."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        chunks = []
        size = 0
        while size < limit:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def read_head(path: str, size: int = 4096) -> bytes | None:
    """The first ``size`` bytes of a file (one read), or None."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.read(fd, size)
    except OSError:
        return None
    finally:
        os.close(fd)


def pids() -> list[int]:
    """Every process visible in /proc."""
    try:
        return [int(n) for n in os.listdir("/proc") if n.isdigit()]
    except OSError:
        return []


def environ_bytes(pid: int) -> bytes | None:
    return read(f"/proc/{pid}/environ")


def environ(pid: int) -> dict[str, str] | None:
    """A process's environment (a name set twice: the last wins), or None."""
    data = environ_bytes(pid)
    if data is None:
        return None
    env: dict[str, str] = {}
    for item in data.split(b"\0"):
        name, sep, value = item.partition(b"=")
        if sep and name:
            env[name.decode("utf-8", "surrogateescape")] = value.decode("utf-8",
                                                                        "surrogateescape")
    return env


def tcp_rows(v6: bool) -> list[list[bytes]]:
    """The rows of ``/proc/net/tcp`` (or ``tcp6``), each split into its columns, read whole
    in one go (the kernel writes the table in pieces: a socket that moves meanwhile could be
    skipped by a reader that reads it line by line)."""
    data = read("/proc/net/tcp6" if v6 else "/proc/net/tcp", TCP_TABLE_LIMIT) or b""
    return [line.split() for line in data.split(b"\n")[1:] if line.strip()]

"""Loopback ports for chosen ranks: free now, and not promised to another job."""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
from collections.abc import Iterator, Sequence

from rankdebug.runtime import registry
from rankdebug.runtime.port_rule import port_of


@contextlib.contextmanager
def registry_lock() -> Iterator[None]:
    """Serialises port choice across jobs on this host (held while ports are recorded)."""
    path = os.path.join(registry.root(), ".ports.lock")
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def ports_in_registry() -> set[int]:
    taken: set[int] = set()
    for job in registry.list_jobs():
        pid = job.get("pid")
        if isinstance(pid, int) and not registry.pid_alive(pid):
            continue  # a job whose supervisor is gone promises nothing
        for entry in job.get("ranks", []):
            port = entry.get("port")
            if isinstance(port, int) and port > 0:
                taken.add(port)
    return taken


def is_free(host: str, port: int) -> bool:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def any_free(host: str) -> int:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def choose(ranks: Sequence[int], host: str, base: int, taken: set[int]) -> dict[int, int]:
    """A port per rank: from ``base`` upwards (skipping ports in use or in ``taken``), or any
    free port when ``base`` is 0. Call under ``registry_lock`` and record the result."""
    out: dict[int, int] = {}
    used = set(taken)
    candidate = port_of(base, 0)
    for rank in ranks:
        if base <= 0:
            port = any_free(host)
            while port in used:
                port = any_free(host)
        else:
            while candidate in used or not is_free(host, candidate):
                candidate += 1
                if candidate > 65535:
                    raise OSError(f"no free port from {base} upwards")
            port = candidate
            candidate += 1
        used.add(port)
        out[rank] = port
    return out

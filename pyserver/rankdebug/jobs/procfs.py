"""Reading ``/proc`` fast: one process's files with raw ``os.open``/``os.read``, no buffering.

A scan touches every process's ``cmdline`` (one short read), and reads more only for the
few that pass each filter: a Python interpreter, owned by this user, whose environment holds
a rank variable. Everything here returns ``None`` for a process that vanished or that we may
not read, never raises.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass

from rankdebug.launcher_table import is_python_name
from rankdebug.runtime import procstat
from rankdebug.runtime.proc import pids, read, read_head, tcp_rows

__all__ = ["pids", "read", "read_head"]  # read here by the scan's callers

CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

PROC_STATES = {
    "R": "running",
    "S": "sleeping",
    "D": "disk-wait",
    "T": "stopped",
    "t": "traced",
    "Z": "zombie",
    "X": "dead",
    "I": "idle",
}



def is_python_argv0(cmdline: bytes) -> bool:
    """Whether a ``cmdline``'s first word names a Python interpreter (python, python3.11 …).

    Scripts with a ``#!`` line show their interpreter first (``/venv/bin/python
    /venv/bin/torchrun …``), so console scripts count too."""
    argv0 = cmdline.split(b"\0", 1)[0]
    base = argv0.rsplit(b"/", 1)[-1]
    return is_python_name(base.decode("latin-1"))


def exe_is_python(pid: int) -> bool:
    """For a process that rewrote its title: whether its executable is a Python."""
    try:
        target = os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return False
    base = target.rsplit("/", 1)[-1].removesuffix(" (deleted)")
    return is_python_name(base)


def python_version(pid: int) -> tuple[int, int] | None:
    """(major, minor) of a Python process, from its executable's or libpython's name."""
    pattern = re.compile(r"(?:python|libpython)(\d)\.(\d+)")
    try:
        found = pattern.search(os.readlink(f"/proc/{pid}/exe").rsplit("/", 1)[-1])
    except OSError:
        found = None
    if found is None:
        maps = read(f"/proc/{pid}/maps") or b""
        hit = re.search(rb"libpython(\d)\.(\d+)", maps)
        if hit is not None:
            return int(hit.group(1)), int(hit.group(2))
        return None
    return int(found.group(1)), int(found.group(2))


def argv(cmdline: bytes) -> list[str]:
    parts = cmdline.split(b"\0")
    if parts and parts[-1] == b"":
        parts.pop()
    return [p.decode("utf-8", "surrogateescape") for p in parts]


def environ(pid: int) -> dict[str, str] | None:
    data = read(f"/proc/{pid}/environ")
    if data is None:
        return None
    return parse_environ(data)


def parse_environ(data: bytes, only: EnvFilter | None = None) -> dict[str, str]:
    """The variables of an ``environ`` file; ``only``: just those it names, the others not
    even decoded (a scan parses the environments of hundreds of ranks). A name set twice:
    the last wins."""
    env: dict[str, str] = {}
    names, prefixes = (only.names, only.prefixes) if only is not None else (None, ())
    for item in data.split(b"\0"):
        name, sep, value = item.partition(b"=")
        if not sep or not name:
            continue
        if names is not None and name not in names and not name.startswith(prefixes):
            continue
        env[name.decode("utf-8", "surrogateescape")] = value.decode("utf-8", "surrogateescape")
    return env


@dataclass(frozen=True)
class EnvFilter:
    """What :func:`parse_environ` keeps: these variables, and those whose names start with
    one of ``prefixes``."""

    names: frozenset[bytes]
    prefixes: tuple[bytes, ...] = ()

    @classmethod
    def of(cls, names: Iterable[str], prefixes: Iterable[str] = ()) -> EnvFilter:
        return cls(frozenset(n.encode() for n in names), tuple(p.encode() for p in prefixes))


@dataclass
class Status:
    """The parts of ``/proc/PID/status`` and ``/proc/PID/stat`` a scan reports."""

    uid: int  # real uid
    euid: int
    ppid: int
    state: str  # one letter (see PROC_STATES)
    threads: int
    rss: int  # bytes
    cpu_time: float  # user + system seconds
    start_ticks: int  # clock ticks after boot


_UIDS = re.compile(rb"^Uid:\s*(\d+)\s+(\d+)", re.MULTILINE)
_RSS = re.compile(rb"^VmRSS:\s*(\d+)", re.MULTILINE)
_THREADS = 17  # in /proc/PID/stat after ``(comm)`` (procstat's indices; state is 0)


def status(pid: int) -> Status | None:
    """The uids and the resident size from ``status`` (two searches, not a parse of its
    fifty lines), the rest from ``stat``."""
    text = read_head(f"/proc/{pid}/status", 8192)
    rest = _stat_fields(pid)
    if text is None or rest is None:
        return None
    uids = _UIDS.search(text)
    if uids is None:
        return None
    rss = _RSS.search(text)
    try:
        return Status(
            uid=int(uids.group(1)),
            euid=int(uids.group(2)),
            ppid=int(rest[procstat.PPID]),
            state=rest[procstat.STATE].decode(),
            threads=int(rest[_THREADS]),
            rss=int(rss.group(1)) * 1024 if rss else 0,  # kernel threads, zombies: none
            cpu_time=(int(rest[procstat.UTIME]) + int(rest[procstat.STIME])) / CLK_TCK,
            start_ticks=int(rest[procstat.START_TIME]),
        )
    except (IndexError, ValueError):
        return None


def _stat_fields(pid: int) -> list[bytes] | None:
    """``procstat.of`` with one raw read (a scan calls it for every rank)."""
    data = read_head(f"/proc/{pid}/stat")
    if not data:
        return None
    end = data.rfind(b")")
    return data[end + 2:].split() if end > 0 else None


def tracer(pid: int) -> int:
    """The pid of the process ptrace-attached to ``pid`` (0: none)."""
    found = re.search(rb"^TracerPid:\s*(\d+)", read(f"/proc/{pid}/status") or b"", re.MULTILINE)
    return int(found.group(1)) if found else 0


def ppid(pid: int) -> int | None:
    return procstat.ppid(pid)


def cwd(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return None


@functools.cache
def boot_time() -> float:
    """Seconds since the epoch at which the machine booted (``btime`` of /proc/stat)."""
    data = read("/proc/stat") or b""
    found = re.search(rb"^btime (\d+)", data, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


def start_time(start_ticks: int) -> float:
    """A process's start time, seconds since the epoch."""
    return boot_time() + start_ticks / CLK_TCK


def uptime() -> float:
    data = read("/proc/uptime") or b"0"
    try:
        return float(data.split()[0])
    except (IndexError, ValueError):
        return 0.0


def listening_ports() -> set[int]:
    """TCP ports some socket listens on (IPv4 and IPv6), from /proc/net/tcp{,6}."""
    ports: set[int] = set()
    for v6 in (False, True):
        for parts in tcp_rows(v6):
            if len(parts) > 3 and parts[3] == b"0A":
                local = parts[1]
                try:
                    ports.add(int(local.rsplit(b":", 1)[1], 16))
                except (IndexError, ValueError):
                    continue
    return ports


def cap_sys_ptrace() -> bool:
    """Whether this process holds CAP_SYS_PTRACE (effective)."""
    data = read("/proc/self/status") or b""
    found = re.search(rb"^CapEff:\s*([0-9a-fA-F]+)", data, re.MULTILINE)
    return bool(found) and bool(int(found.group(1), 16) & (1 << 19)) if found else False

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
from dataclasses import dataclass

from rankdebug.runtime import procstat

CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096

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

_PYTHON_NAME = re.compile(rb"^(python|pypy)[0-9.]*[a-z]?$")


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
    try:
        return [int(n) for n in os.listdir("/proc") if n.isdigit()]
    except OSError:
        return []


def is_python_argv0(cmdline: bytes) -> bool:
    """Whether a ``cmdline``'s first word names a Python interpreter (python, python3.11 …).

    Scripts with a ``#!`` line show their interpreter first (``/venv/bin/python
    /venv/bin/torchrun …``), so console scripts count too."""
    argv0 = cmdline.split(b"\0", 1)[0]
    base = argv0.rsplit(b"/", 1)[-1]
    return bool(_PYTHON_NAME.match(base))


def exe_is_python(pid: int) -> bool:
    """For a process that rewrote its title: whether its executable is a Python."""
    try:
        target = os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return False
    base = target.rsplit("/", 1)[-1].removesuffix(" (deleted)")
    return bool(_PYTHON_NAME.match(base.encode()))


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


def parse_environ(data: bytes) -> dict[str, str]:
    env: dict[str, str] = {}
    for item in data.split(b"\0"):
        name, sep, value = item.partition(b"=")
        if sep and name:
            env[name.decode("utf-8", "surrogateescape")] = value.decode(
                "utf-8", "surrogateescape")
    return env


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


def status(pid: int) -> Status | None:
    text = read(f"/proc/{pid}/status")
    rest = procstat.of(pid)
    if text is None or rest is None:
        return None
    fields: dict[bytes, bytes] = {}
    for line in text.split(b"\n"):
        name, sep, value = line.partition(b":")
        if sep:
            fields[name] = value.strip()
    try:
        uids = fields[b"Uid"].split()
        rss_kb = fields.get(b"VmRSS", b"0 kB").split()[0]
        return Status(
            uid=int(uids[0]),
            euid=int(uids[1]),
            ppid=int(rest[procstat.PPID]),
            state=rest[procstat.STATE].decode(),
            threads=int(fields.get(b"Threads", b"1")),
            rss=int(rss_kb) * 1024,
            cpu_time=(int(rest[procstat.UTIME]) + int(rest[procstat.STIME])) / CLK_TCK,
            start_ticks=int(rest[procstat.START_TIME]),
        )
    except (KeyError, IndexError, ValueError):
        return None


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
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        data = read(name) or b""
        for line in data.split(b"\n")[1:]:
            parts = line.split()
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

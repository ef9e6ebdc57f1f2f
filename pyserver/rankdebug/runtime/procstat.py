"""``/proc/PID/stat`` read in one place: the fields after the command name, which may hold
spaces and parentheses of its own (so it is cut at the last ``)``).

Stdlib only, Python 3.9 and later: the rank side reads its threads' states with it, the
tools read processes' parents, states and times.
"""

from __future__ import annotations

STATE, PPID, UTIME, STIME, START_TIME = 0, 1, 11, 12, 19  # indices into ``fields``


def fields(path: str) -> list[bytes] | None:
    """The fields of a ``stat`` file after ``(comm)``: state first; None when unreadable."""
    try:
        with open(path, "rb") as f:
            data = f.read(4096)
    except OSError:
        return None
    end = data.rfind(b")")
    return data[end + 2:].split() if end > 0 else None


def of(pid: int) -> list[bytes] | None:
    return fields(f"/proc/{pid}/stat")


def ppid(pid: int) -> int | None:
    got = of(pid)
    try:
        return int(got[PPID]) if got else None
    except (IndexError, ValueError):
        return None


def is_zombie(pid: int) -> bool:
    """Whether ``pid`` has ended (gone, or a zombie not yet reaped)."""
    rest = of(pid)
    return rest is None or (bool(rest) and rest[STATE] in (b"Z", b"X"))

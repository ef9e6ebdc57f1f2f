"""Process-tree chores for the supervisor: adopt orphans, find every process of a job, end them.

debugpy's adapter daemonizes (``setsid`` and a second fork), and torchrun starts each rank in
a session of its own, so neither a process group nor ``PR_SET_PDEATHSIG`` reaches them all.
The supervisor therefore makes itself a *child subreaper* (orphans of the job re-parent to it,
not to PID 1), walks ``/proc`` for its descendants, and as a last resort looks for processes
whose environment carries the job's id.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import time
from collections.abc import Callable, Iterable

from rankdebug.runtime import bootstrap, proc, procstat
from rankdebug.runtime.procstat import is_zombie

PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Make orphaned descendants re-parent to this process (Linux); False where unsupported."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return bool(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


PR_SET_PDEATHSIG = 1


def parent_death_signal(sig: int) -> Callable[[], None] | None:
    """A ``preexec_fn`` that has the child receive ``sig`` when the supervisor dies (even by
    SIGKILL), so a launcher never outlives it; None where unsupported."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None

    def preexec() -> None:  # runs in the child between fork and exec: no imports here
        prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)

    return preexec


def _parents() -> dict[int, int]:
    """pid -> ppid for every process visible in /proc."""
    out: dict[int, int] = {}
    for pid in proc.pids():
        parent = procstat.ppid(pid)
        if parent is not None:
            out[pid] = parent
    return out


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (children first), ``pid`` excluded."""
    parents = _parents()
    children: dict[int, list[int]] = {}
    for child, parent in parents.items():
        children.setdefault(parent, []).append(child)
    out: list[int] = []
    todo = list(children.get(pid, []))
    while todo:
        p = todo.pop(0)
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def children(pid: int) -> list[int]:
    return [c for c, p in _parents().items() if p == pid]


def rank_pids(pids: Iterable[int]) -> dict[int, int]:
    """pid -> global rank of the rank processes among ``pids``, their ranks read as their
    bootstrap reads them (``bootstrap.detect_rank``: the job's ``RANKDEBUG_RANKVARS``).
    A rank's own children (DataLoader workers) carry its variables too, and
    ``RANKDEBUG_ACTED`` (the rank's pid, set by its bootstrap): they are left out, but not a
    copy a rank starts as another rank (``bootstrap.helper_of_rank``: Lightning's)."""
    found: dict[int, int] = {}
    for pid in pids:
        env = proc.environ(pid)
        if env is None or bootstrap.helper_of_rank(env, pid):
            continue
        got = bootstrap.detect_rank(env)
        if got is not None:
            found[pid] = got[0]
    return found


def ranks_started(pids: Iterable[int]) -> list[int]:
    """The global ranks that processes ``pids`` carry (see ``rank_pids``)."""
    return sorted(set(rank_pids(pids).values()))


def with_env(name: str, value: str) -> list[int]:
    """Processes of this user whose environment has ``name=value`` (escaped job processes)."""
    needle = f"{name}={value}".encode()
    me = os.getpid()
    out = []
    for pid in _parents():
        if pid == me:
            continue
        env = proc.environ_bytes(pid)
        if env is not None and needle in env.split(b"\0"):
            out.append(pid)
    return out


def alive(pids: Iterable[int]) -> list[int]:
    return [p for p in pids if not is_zombie(p)]


def signal_all(pids: Iterable[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def reap(keep: int | None = None) -> None:
    """Collect exit statuses of adopted orphans (never ``keep``: Popen waits for that one).

    Called ten times a second for a whole run: it peeks at ended children with one
    ``waitid`` (no /proc walk, which costs tens of ms on a node with thousands of
    processes); only when ``keep`` itself has ended are the others looked up by pid."""
    if not hasattr(os, "waitid"):
        _reap_scan(keep)
        return
    while True:
        try:
            info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return  # no children at all
        except OSError:
            _reap_scan(keep)
            return
        if info is None or info.si_pid == 0:
            return  # no child has ended
        if info.si_pid == keep:
            _reap_scan(keep)  # it hides the others from waitid: collect them by pid
            return
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(info.si_pid, 0)


def _reap_scan(keep: int | None) -> None:
    for pid in children(os.getpid()):
        if pid == keep:
            continue
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)


def end_all(find: Callable[[], list[int]], keep: int | None, grace: float) -> list[int]:
    """SIGTERM what ``find()`` returns, SIGKILL what is left after ``grace`` seconds; returns
    the survivors (empty when all are gone)."""
    deadline = time.monotonic() + grace
    signal_all(alive(find()), signal.SIGTERM)
    while time.monotonic() < deadline:
        reap(keep)
        if not alive(find()):
            return []
        time.sleep(0.05)
    signal_all(alive(find()), signal.SIGKILL)
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:
        reap(keep)
        left = alive(find())
        if not left:
            return []
        time.sleep(0.05)
    return alive(find())

"""Python 3.14's own remote attach (PEP 768, ``sys.remote_exec``): the way into a rank that
needs no ptrace injection of ours.

``sys.remote_exec(pid, path)`` asks the interpreter of ``pid`` to run the file ``path`` in its
main thread at its next safe point, the way it runs a signal handler: between two bytecodes,
in a fresh namespace, holding the GIL. It is used when both interpreters are the same Python
≥ 3.14 (the caller's and the rank's minor versions must match) and the rank has not switched
it off (``PYTHON_DISABLE_REMOTE_DEBUG`` set, ``-X disable_remote_debug``); a build without it
says so when asked, and ptrace injection (``rankdebug.jobs.injector.inject``) is the fallback.

A rank whose main thread sits in C (a long collective, a blocking read) reaches no safe point:
the script then never starts, and after ``CLAIM_S`` the attach takes the injector's way, which
runs code in a thread stopped in a system call. So that the attach never happens twice, the
script's first act is to delete its own file, and the fallback deletes it too before it
injects: whoever deletes it owns the attach. A script that lost prints nothing; an
interpreter that reaches the pending script after the fallback finds no file and prints one
line on its stderr ("Can't open debugger script").
"""

from __future__ import annotations

import contextlib
import os
import sys
import time

from rankdebug.jobs import procfs

MIN_PYTHON = (3, 14)
CLAIM_S = 2.0  # how long the rank's main thread may take to reach Python code
NAME_PREFIX = "remote-exec-"


def _interpreter_options(argv: list[str]) -> list[str]:
    """The interpreter's own options of a Python command line (before the script, ``-m`` or
    ``-c``), each ``-X`` joined with its value (``-Xname``)."""
    out: list[str] = []
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg == "--" or not arg.startswith("-") or arg == "-":
            break
        if arg.startswith(("-m", "-c")):
            break  # what follows belongs to the module or the command
        if arg in ("-X", "-W") and i + 1 < len(argv):
            out.append(arg + argv[i + 1])
            i += 2
            continue
        out.append(arg)
        i += 1
    return out


def why_not(pid: int, ours: tuple[int, int] | None = None) -> str | None:
    """Why ``sys.remote_exec`` cannot reach ``pid`` (said in a few words), or None when it
    may: this interpreter's version ``ours`` (default: the running one) and the rank's
    version, environment and command line are read, not the rank's build (a build
    without remote debugging refuses when asked)."""
    ours = ours or (sys.version_info.major, sys.version_info.minor)
    if ours < MIN_PYTHON:
        return f"rankdebug runs on Python {ours[0]}.{ours[1]}; PEP 768 needs 3.14"
    theirs = procfs.python_version(pid)
    if theirs != ours:
        said = "an unknown version" if theirs is None else f"{theirs[0]}.{theirs[1]}"
        return f"process {pid} runs Python {said}, rankdebug {ours[0]}.{ours[1]}"
    return switched_off(pid)


def switched_off(pid: int) -> str | None:
    """How ``pid`` switched remote debugging off at its start, or None."""
    options = _interpreter_options(procfs.argv(procfs.read(f"/proc/{pid}/cmdline") or b""))
    if "-Xdisable_remote_debug" in options:
        return f"process {pid} was started with -X disable_remote_debug"
    # -E and -I (alone or among other one-letter flags: -uE) make it ignore the variable.
    ignores_env = any(not o.startswith(("-X", "-W", "--")) and ("E" in o or "I" in o)
                      for o in options)
    env = procfs.environ(pid) or {}
    if env.get("PYTHON_DISABLE_REMOTE_DEBUG") and not ignores_env:
        return f"process {pid} has PYTHON_DISABLE_REMOTE_DEBUG set"
    return None


def script(code: str, path: str) -> str:
    """The file ``sys.remote_exec`` runs: ``code`` (``attach.attach_code``, what the injector
    runs), only if this run is the first to delete ``path``, the file itself."""
    return ("import os as _os\n"
            "try:\n"
            f"    _os.remove({path!r})\n"
            "except FileNotFoundError:\n"
            "    _won = False  # the injector's fallback, or an earlier run, took it\n"
            "else:\n"
            "    _won = True\n"
            "del _os\n"
            "if _won:\n"
            f"    exec({code!r})\n"
            "del _won\n")


def write(folder: str, pid: int, code: str) -> str:
    """Write the script for ``pid`` into ``folder`` (this user's own, 0700); its path."""
    path = os.path.join(folder, f"{NAME_PREFIX}{pid}-{os.getpid()}-{time.monotonic_ns()}.py")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(script(code, path))
    return path


def send(pid: int, path: str) -> str | None:
    """Ask ``pid`` to run ``path``; None once asked, else why it could not be (the script
    removed)."""
    remote_exec = getattr(sys, "remote_exec", None)
    error = "this Python has no sys.remote_exec"
    if remote_exec is not None:
        try:
            remote_exec(pid, path)
            return None
        except (RuntimeError, OSError, ValueError) as exc:
            error = f"sys.remote_exec refused: {exc}"
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)
    return error


def started(pid: int, path: str, within: float = CLAIM_S) -> bool:
    """Whether the rank took the script (it deletes its file first) within ``within``
    seconds; if not, it is taken back here, so that it never runs after the fallback."""
    deadline = time.monotonic() + within
    while os.path.exists(path) and time.monotonic() < deadline:
        if procfs.status(pid) is None:
            break
        time.sleep(0.02)
    try:
        os.remove(path)
    except FileNotFoundError:
        return True  # the rank deleted it: its attach runs
    return False

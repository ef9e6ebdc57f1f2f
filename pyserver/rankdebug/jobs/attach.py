"""Make a running Python process listen for a debugger, although nothing of ours started it.

debugpy's own attach script (``debugpy/server/attach_pid_injected.py``, what ``python -m
debugpy --listen HOST:PORT --pid P`` runs in P) is run inside P; it puts debugpy's
pure-Python package, the very version this ``rankdebug`` uses, on P's ``sys.path`` and calls
``debugpy.listen``. debugpy's adapter then runs as a child of P, with P's own interpreter.

Two ways to run it there (``RANKDEBUG_INJECT=ptrace|gdb`` overrides the choice):

- ``rankdebug.jobs.inject`` (x86-64 Linux, the default there): plain ptrace stops P's main
  thread where it waits in a system call and calls the interpreter's C API on it, in
  milliseconds. No gdb: gdb 13's inferior calls fail on some CPUs and kill the rank they
  were meant to debug (its interrupted system call fails with errno 514).
- gdb, through ``python -m debugpy --pid`` (other machines):
  gdb reads the symbols of the C library only (``dlopen`` lives there), not of every
  library a training process maps (libtorch's alone take seconds); when that is not
  enough (an unusual libc), the attach is tried once more with every library.

Only P is touched: it stops for milliseconds (seconds under gdb), the other ranks never.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass

from rankdebug.jobs import inject, procfs
from rankdebug.jobs.ptrace import diagnose, explain_failure, refused

MIN_PYTHON = (3, 8)  # what debugpy 1.8 supports
QUICK_LIBS = "libc.so,libc-,libdl.so,libpthread.so"
INJECT_TIMEOUT_S = 60.0
LISTEN_TIMEOUT_S = 30.0


class AttachError(Exception):
    """The process cannot be made to listen; the message says why and what to do."""


@dataclass
class Attached:
    pid: int
    host: str
    port: int
    seconds: float
    injected: bool  # False: it was already listening


def free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def check_target(pid: int) -> None:
    """Refuse early, with a reason: gone, someone else's, not Python, too old a Python,
    already traced, ptrace forbidden."""
    st = procfs.status(pid)
    if st is None:
        raise AttachError(f"no process {pid}")
    if st.uid != os.getuid():
        raise AttachError(f"process {pid} belongs to another user (uid {st.uid}); "
                          "rankdebug attaches only to your own processes")
    if st.state in ("Z", "X"):
        raise AttachError(f"process {pid} has exited")
    cmdline = procfs.read(f"/proc/{pid}/cmdline") or b""
    if not procfs.is_python_argv0(cmdline) and not procfs.exe_is_python(pid):
        raise AttachError(f"process {pid} is not a Python interpreter "
                          f"({' '.join(procfs.argv(cmdline))[:80]!r})")
    version = procfs.python_version(pid)
    if version is not None and version < MIN_PYTHON:
        raise AttachError(f"process {pid} runs Python {version[0]}.{version[1]}; debugpy "
                          f"needs {MIN_PYTHON[0]}.{MIN_PYTHON[1]} or later")
    tracer = procfs.tracer(pid)
    if tracer:
        name = (procfs.read_head(f"/proc/{tracer}/comm", 64) or b"?").decode(errors="replace")
        raise AttachError(f"process {pid} is already traced by process {tracer} "
                          f"({name.strip()}), and a process can have only one tracer: "
                          "detach that debugger (or wait for py-spy to finish) and try again")
    problem = diagnose(pid)
    if problem is not None:
        raise AttachError(problem)


def _debugpy_root() -> str:
    import debugpy

    return os.path.dirname(os.path.dirname(os.path.abspath(debugpy.__file__)))


def attach_code(host: str, port: int) -> str:
    """The Python that makes a process listen on ``host:port``: debugpy's attach script, run
    as ``python -m debugpy --pid`` runs it."""
    import debugpy.server

    setup = {"mode": "listen", "address": [host, port], "wait_for_client": False,
             "log_to": None, "adapter_access_token": None}
    server_dir = os.path.dirname(os.path.abspath(debugpy.server.__file__))
    return (f"import sys\nsys.path.insert(0, {server_dir!r})\n"
            "import attach_pid_injected\ndel sys.path[0]\n"
            f"attach_pid_injected.attach({setup!r})\n")


def injector() -> str:
    """``ptrace`` (our own injector, x86-64 Linux) or ``gdb``; ``RANKDEBUG_INJECT`` picks."""
    how = os.environ.get("RANKDEBUG_INJECT") or ("ptrace" if inject.supported() else "gdb")
    if how not in ("ptrace", "gdb") or (how == "ptrace" and not inject.supported()):
        raise AttachError(f"RANKDEBUG_INJECT={how!r}: use 'gdb'"
                          + (" or 'ptrace'" if inject.supported() else " on this machine"))
    return how


def _inject_direct(pid: int, host: str, port: int, timeout: float) -> None:
    """Run debugpy's attach script in ``pid`` with ptrace alone; returns once it ran or is
    queued to run."""
    try:
        result = inject.run_python(pid, attach_code(host, port), timeout)
    except inject.InjectError as exc:
        raise AttachError(str(exc)) from None
    except OSError as exc:
        if procfs.status(pid) is None:
            raise AttachError(f"process {pid} ended while attaching") from None
        if exc.errno in (errno.EPERM, errno.EACCES):
            raise AttachError(refused(pid)) from None
        raise AttachError(f"could not make process {pid} listen: {exc.strerror}") from None
    if result not in (0, None):
        raise AttachError(f"debugpy's attach script raised in process {pid}; the "
                          "traceback is on that process's stderr")


def _inject(pid: int, host: str, port: int, quick: bool, timeout: float) -> tuple[int, str]:
    env = dict(os.environ)
    root = _debugpy_root()
    env["PYTHONPATH"] = os.pathsep.join([root, *filter(None, [env.get("PYTHONPATH")])])
    if quick:
        env["PYDEVD_GDB_SCAN_SHARED_LIBRARIES"] = QUICK_LIBS
    argv = [sys.executable, "-m", "debugpy", "--listen", f"{host}:{port}", "--pid", str(pid)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, env=env, text=True,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        # A tracer killed mid-way detaches; a stop it left pending must not freeze the rank.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGCONT)
        raise AttachError(f"gdb did not finish attaching to {pid} in {timeout:.0f} s") from None
    return proc.returncode, out


def wait_listening(port: int, pid: int, timeout: float) -> bool:
    """Whether ``port`` listens within ``timeout`` (read from /proc/net: no connection is
    made, so the adapter never sees a client that goes away)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if port in procfs.listening_ports():
            return True
        if procfs.status(pid) is None:
            return False
        time.sleep(0.05)
    return False


def _reached(out: str) -> bool:
    """Whether gdb got as far as calling debugpy's ``DoAttach`` (it prints its int result)."""
    return re.search(r"^\$\d+ = -?\d+\s*$", out, re.MULTILINE) is not None


def attach(pid: int, host: str = "127.0.0.1", port: int = 0,
           timeout: float = INJECT_TIMEOUT_S) -> Attached:
    """Inject debugpy into ``pid`` listening on ``host:port`` (0: a free port); returns once
    the port listens."""
    t0 = time.monotonic()
    check_target(pid)
    if port and port in procfs.listening_ports():
        raise AttachError(f"port {port} is already in use; leave --port out to take a free one")
    port = port or free_port(host)
    if injector() == "gdb":
        return _attach_with_gdb(pid, host, port, timeout, t0)
    _inject_direct(pid, host, port, timeout)
    if wait_listening(port, pid, LISTEN_TIMEOUT_S):
        return Attached(pid, host, port, round(time.monotonic() - t0, 3), True)
    raise _not_listening(pid, port)


def _not_listening(pid: int, port: int) -> AttachError:
    if procfs.status(pid) is None:
        return AttachError(f"process {pid} ended while attaching")
    # debugpy is in the process: injecting it twice would not help.
    return AttachError(f"debugpy was loaded into process {pid} but port {port} did not open "
                       f"within {LISTEN_TIMEOUT_S:.0f} s; the process's own stderr says why")


def _attach_with_gdb(pid: int, host: str, port: int, timeout: float, t0: float) -> Attached:
    if shutil.which("gdb") is None:
        raise AttachError("gdb is needed to attach to a process that rankdebug did not "
                          "start on this machine: install it (`sudo apt-get install gdb`, "
                          "`sudo dnf install gdb`)")
    out = ""
    for quick in (True, False):
        code, out = _inject(pid, host, port, quick=quick, timeout=timeout)
        if code == 0 and wait_listening(port, pid, LISTEN_TIMEOUT_S):
            return Attached(pid, host, port, round(time.monotonic() - t0, 3), True)
        refused = explain_failure(pid, out)
        if refused is not None:
            raise AttachError(refused)
        if procfs.status(pid) is None or _reached(out):
            raise _not_listening(pid, port)
    raise AttachError(_tail(out, pid))


def _tail(out: str, pid: int) -> str:
    lines = [ln for ln in out.strip().splitlines() if ln.strip()][-6:]
    return f"could not make process {pid} listen; gdb/debugpy said:\n" + "\n".join(lines)

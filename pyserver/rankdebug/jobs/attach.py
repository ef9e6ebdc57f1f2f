"""Make a running Python process listen for a debugger, although nothing of ours started it.

debugpy's own ``--pid`` support does the work: ``python -m debugpy --listen HOST:PORT --pid
P`` runs gdb, which attaches to P, loads debugpy's small attach library into it and runs
``debugpy.listen`` there (debugpy's pure-Python package, the very version this ``rankdebug``
uses, is put on the process's ``sys.path`` by that code). debugpy's adapter then runs as a
child of the process, with the process's own interpreter. Only P is touched: the rank stops
for the second or two gdb needs, the other ranks never.

To keep that short, gdb reads the symbols of the C library only (``dlopen`` lives there),
not of every library a training process maps (libtorch's alone take seconds); when that
is not enough (an unusual libc), the attach is tried once more with every library.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass

from rankdebug.jobs import procfs
from rankdebug.jobs.ptrace import diagnose, explain_failure

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
    gdb missing, ptrace forbidden."""
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
    if shutil.which("gdb") is None:
        raise AttachError("gdb is needed to attach to a process that rankdebug did not "
                          "start: install it (`sudo apt-get install gdb`, "
                          "`sudo dnf install gdb`)")
    problem = diagnose(pid)
    if problem is not None:
        raise AttachError(problem)


def _debugpy_root() -> str:
    import debugpy

    return os.path.dirname(os.path.dirname(os.path.abspath(debugpy.__file__)))


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
    for quick in (True, False):
        code, out = _inject(pid, host, port, quick=quick, timeout=timeout)
        if code == 0 and wait_listening(port, pid, LISTEN_TIMEOUT_S):
            return Attached(pid, host, port, round(time.monotonic() - t0, 3), True)
        refused = explain_failure(pid, out)
        if refused is not None:
            raise AttachError(refused)
        if procfs.status(pid) is None:
            raise AttachError(f"process {pid} ended while attaching")
        if _reached(out):
            # debugpy is in the process: injecting it twice would not help.
            raise AttachError(
                f"debugpy was loaded into process {pid} but port {port} did not open within "
                f"{LISTEN_TIMEOUT_S:.0f} s; the process's own stderr says why")
    raise AttachError(_tail(out, pid))


def _tail(out: str, pid: int) -> str:
    lines = [ln for ln in out.strip().splitlines() if ln.strip()][-6:]
    return f"could not make process {pid} listen; gdb/debugpy said:\n" + "\n".join(lines)

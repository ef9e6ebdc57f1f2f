"""Make a running Python process listen for a debugger, although nothing of ours started it.

debugpy's own attach script (``debugpy/server/attach_pid_injected.py``, what ``python -m
debugpy --listen HOST:PORT --pid P`` runs in P) is run inside P; it puts debugpy's
pure-Python package, the very version this ``rankdebug`` uses, on P's ``sys.path`` and calls
``debugpy.listen``. debugpy's adapter then runs as a child of P, with P's own interpreter.

Ways to run it there (``RANKDEBUG_INJECT=ptrace|gdb`` forces one of the last two):

- ``sys.remote_exec`` (PEP 768, ``jobs.injector.remote_exec``): when rankdebug and P run the
  same Python ≥ 3.14 and P has not switched remote debugging off; P runs the script at its
  next safe point. A P whose main thread reaches none (it waits in C) within a few seconds,
  or refuses, gets the injector instead.
- ``rankdebug.jobs.injector.inject`` (x86-64 Linux, the default there): plain ptrace stops P's main
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
import threading
import time
from dataclasses import dataclass

from rankdebug.jobs import procfs
from rankdebug.jobs.injector import inject, remote_exec
from rankdebug.jobs.injector.ptrace import diagnose, explain_failure, refused
from rankdebug.runtime import adapter_wrapper, registry

MIN_PYTHON = (3, 8)  # what debugpy 1.8 supports
QUICK_LIBS = "libc.so,libc-,libdl.so,libpthread.so"
INJECT_TIMEOUT_S = 60.0
LISTEN_TIMEOUT_S = 30.0
POLL_S = 0.05


class AttachError(Exception):
    """The process cannot be made to listen; the message says why and what to do."""


@dataclass
class Attached:
    pid: int
    host: str
    port: int
    seconds: float
    injected: bool  # False: it was already listening
    via: str = ""  # how debugpy got in: "remote_exec", "ptrace" or "gdb"


_ports_lock = threading.Lock()
_handed: set[int] = set()  # ports this process gave a rank: not yet listening, still taken


def armed_listen(socket_path: str, timeout: float) -> tuple[str, int]:
    """An armed rank's debugger started through its handler (no injection): where it
    listens. Raises AttachError with the handler's reason."""
    from rankdebug.runtime.wire import WireError, ask

    try:
        reply = ask(socket_path, {"command": "attach"}, timeout=timeout)
        return str(reply.get("host") or "127.0.0.1"), int(reply["port"])
    except (WireError, KeyError, TypeError, ValueError) as exc:
        raise AttachError(str(exc)) from None


def free_port(host: str) -> int:
    """A port nothing listens on, and none given to another rank of this process (ranks
    attached at once each ask before the first one listens)."""
    with _ports_lock:
        for _ in range(50):
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
                sock.bind((host, 0))
                port: int = sock.getsockname()[1]
            if port not in _handed:
                break
        _handed.add(port)
        return port


@dataclass
class _Seen:
    at: float
    ports: set[int]


_seen_lock = threading.Lock()
_seen = _Seen(0.0, set())


def listening_ports() -> set[int]:
    """``procfs.listening_ports``, read at most once per ``POLL_S`` for every thread that
    waits (16 ranks attached at once would read /proc/net/tcp 320 times a second)."""
    with _seen_lock:
        if time.monotonic() - _seen.at >= POLL_S:
            _seen.ports = procfs.listening_ports()
            _seen.at = time.monotonic()
        return _seen.ports


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


def _attach_helpers() -> str:
    """pydevd's attach-to-process folder (``attach_script``, ``add_code_to_python_process``)."""
    return os.path.join(_debugpy_root(), "debugpy", "_vendored", "pydevd",
                        "pydevd_attach_to_process")


def attach_code(host: str, port: int, python: str) -> str:
    """The Python that makes a process listen on ``host:port``: debugpy's attach script, run
    as ``python -m debugpy --pid`` runs it. ``python``: what debugpy spawns its adapter with
    (``rankdebug.runtime.adapter_wrapper``: owner-only). One function, called and deleted, so the
    target's ``__main__`` keeps no names of ours."""
    import debugpy.server

    setup = {"mode": "listen", "address": [host, port], "wait_for_client": False,
             "log_to": None, "adapter_access_token": None}
    server_dir = os.path.dirname(os.path.abspath(debugpy.server.__file__))
    root = _debugpy_root()
    # debugpy's script fixes the main thread's id only while threading is not yet
    # imported, and configure() imports it: fix it first, as that script would.
    fixer = _attach_helpers()
    body = [
        "import sys",
        "if 'threading' not in sys.modules:",
        f"    sys.path.insert(0, {fixer!r})",
        "    import attach_script",
        "    say = lambda m: print(m, file=sys.stderr)",
        "    attach_script.fix_main_thread_id(on_warn=say, on_exception=say,"
        " on_critical=say)",
        f"    sys.path.remove({fixer!r})",
        f"sys.path.insert(0, {root!r})",
        "try:",
        "    import debugpy",
        "finally:",
        "    del sys.path[0]",
        f"debugpy.configure(python={python!r})",
        f"sys.path.insert(0, {server_dir!r})",
        "import attach_pid_injected",
        "del sys.path[0]",
        f"attach_pid_injected.attach({setup!r})",
        # pydevd writes header and body apart: without this each answer waits ~40 ms for a
        # delayed ACK (rankdebug.runtime.tcp).
        "import pydevd, socket",
        "sock = getattr(getattr(pydevd.get_global_debugger(), 'writer', None), 'sock', None)",
        "if isinstance(sock, socket.socket) and sock.family != socket.AF_UNIX:",
        "    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)",
    ]
    # A failure is printed on the process's stderr, never raised into the user's code (a
    # pending call that raises would surface in whatever the main thread was running).
    return ("def _rankdebug_attach():\n" + "".join(f"    {line}\n" for line in body)
            + "try:\n    _rankdebug_attach()\nexcept Exception:\n"
            "    __import__('traceback').print_exc()\n"
            "finally:\n    del _rankdebug_attach\n")


def quote_free(code: str) -> str:
    """``code`` as one line with no quotes or newlines (what gdb's injection can carry)."""
    data = ",".join(str(b) for b in code.encode("utf-8"))
    return f"import codecs;exec(codecs.utf_8_decode(bytearray([{data}]))[0])"


def injector() -> str:
    """``ptrace`` (our own injector, x86-64 Linux) or ``gdb``, where ``sys.remote_exec``
    cannot be used or does not run; ``RANKDEBUG_INJECT`` picks."""
    how = os.environ.get("RANKDEBUG_INJECT") or ("ptrace" if inject.supported() else "gdb")
    if how not in ("ptrace", "gdb") or (how == "ptrace" and not inject.supported()):
        raise AttachError(f"RANKDEBUG_INJECT={how!r}: use 'gdb'"
                          + (" or 'ptrace'" if inject.supported() else " on this machine"))
    return how


def _inject_direct(pid: int, code: str, timeout: float) -> None:
    """Run ``code`` (``attach_code``) in ``pid`` with ptrace alone; returns once it ran or is
    queued to run."""
    try:
        result = inject.run_python(pid, code, timeout)
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


# What ``python -m debugpy --pid`` does to inject with gdb, with our code instead of its own.
_GDB_RUNNER = """import sys
sys.path.insert(0, sys.argv[3])
import add_code_to_python_process
add_code_to_python_process.run_python_code(int(sys.argv[1]), sys.argv[2],
                                           connect_debugger_tracing=True, show_debug_info=0)
"""


def _inject(pid: int, code: str, quick: bool, timeout: float) -> tuple[int, str]:
    env = dict(os.environ)
    if quick:
        env["PYDEVD_GDB_SCAN_SHARED_LIBRARIES"] = QUICK_LIBS
    argv = [sys.executable, "-c", _GDB_RUNNER, str(pid), quote_free(code), _attach_helpers()]
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
        if port in listening_ports():
            return True
        if procfs.status(pid) is None:
            return False
        time.sleep(POLL_S)
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
    how = injector()
    # debugpy spawns its adapter through this (owner-only, ended with the process); it
    # deletes itself when run, and here if it never was.
    python = adapter_wrapper.write(registry.root(), pid)
    try:
        code = attach_code(host, port, python)
        if not os.environ.get("RANKDEBUG_INJECT") and _remote(pid, code):
            how = "remote_exec"
        elif how == "gdb":
            _attach_with_gdb(pid, code, port, timeout)
        else:
            _inject_direct(pid, code, timeout)
        if how != "gdb" and not wait_listening(port, pid, LISTEN_TIMEOUT_S):
            raise _not_listening(pid, port)
        return Attached(pid, host, port, round(time.monotonic() - t0, 3), True, how)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(python)


def _remote(pid: int, code: str) -> bool:
    """Whether ``code`` runs in ``pid`` through ``sys.remote_exec`` (Python 3.14, PEP 768);
    False when it cannot be used here or the rank did not take it in time (then it never
    will: the injector takes over)."""
    if remote_exec.why_not(pid) is not None:
        return False
    path = remote_exec.write(registry.root(), pid, code)
    if remote_exec.send(pid, path) is not None:
        return False
    return remote_exec.started(pid, path)


def _not_listening(pid: int, port: int) -> AttachError:
    if procfs.status(pid) is None:
        return AttachError(f"process {pid} ended while attaching")
    # debugpy is in the process: injecting it twice would not help.
    return AttachError(f"debugpy was loaded into process {pid} but port {port} did not open "
                       f"within {LISTEN_TIMEOUT_S:.0f} s; the process's own stderr says why")


def _attach_with_gdb(pid: int, code: str, port: int, timeout: float) -> None:
    if shutil.which("gdb") is None:
        raise AttachError("gdb is needed to attach to a process that rankdebug did not "
                          "start on this machine: install it (`sudo apt-get install gdb`, "
                          "`sudo dnf install gdb`)")
    out = ""
    for quick in (True, False):
        status, out = _inject(pid, code, quick=quick, timeout=timeout)
        if status == 0 and wait_listening(port, pid, LISTEN_TIMEOUT_S):
            return
        refused = explain_failure(pid, out)
        if refused is not None:
            raise AttachError(refused)
        if procfs.status(pid) is None or _reached(out):
            raise _not_listening(pid, port)
    raise AttachError(_tail(out, pid))


def _tail(out: str, pid: int) -> str:
    lines = [ln for ln in out.strip().splitlines() if ln.strip()][-6:]
    return f"could not make process {pid} listen; gdb/debugpy said:\n" + "\n".join(lines)

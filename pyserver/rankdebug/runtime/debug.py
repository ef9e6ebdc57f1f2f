"""The debugger in a chosen rank: debugpy on loopback, reported to the supervisor.

Imported by the bootstrap in chosen ranks only. Reads its settings from the environment
``rankdebug launch`` sets:

    RANKDEBUG_JOB        job id (registry folder name)
    RANKDEBUG_CTL        the supervisor's control socket (AF_UNIX); absent: write the registry
    RANKDEBUG_HOST       address to listen on (127.0.0.1)
    RANKDEBUG_PORTS      "rank:port,..." ports the supervisor reserved (any other chosen
                         rank takes any free port: runtime/port_rule.py)
    RANKDEBUG_WAIT       "1": wait for a client before the script runs on
    RANKDEBUG_DEBUGPY    a folder holding (a link to) the ``debugpy`` package
    RANKDEBUG_ADAPTER_PYTHON  the interpreter for debugpy's adapter process
    RANKDEBUG_BREAKS     JSON [[file, line], ...]: breakpoints known at start (fast path)
    RANKDEBUG_ATTACH     "start" (listen before the script runs) or "hit" (at the first
                         breakpoint hit, through hit-hooks; see ``hithook``)
    RANKDEBUG_NODE       "nodeN" on another node than the supervisor's (``--hosts``)
    RANKDEBUG_NODES      "HOSTNAME:nodeN,...": the other nodes, for ranks that srun or
                         mpirun starts there with the first node's environment

Its parts: ``reporting`` (who the rank is, and its reports to the supervisor) and
``debugpy_start`` (debugpy imported and listening). Here: the start, the armed rank's
handler, attaching at a hit, the attach signal, uncaught exceptions, fork and exit.

Pure Python, 3.9 and later; imports debugpy only when it is about to listen.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import sys
import threading

from rankdebug.runtime import frames, wire
from rankdebug.runtime.debugpy_start import import_debugpy, listen, wait_for_client
from rankdebug.runtime.reporting import connect_ctl, send, setting, state, trace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import FrameType, TracebackType
    from typing import Any


# One attach at a time: a hit, the attach signal and an armed rank's handler may race.
_attach_lock = threading.RLock()


def prepare(rank: int, local_rank: int | None, world_size: int | None,
            chosen: bool = True) -> None:
    """Set up reporting for this rank: control socket (or registry), exit and fork hooks.
    ``chosen``: the rank debugs from the start (an armed rank only reports)."""
    if state.pid == os.getpid():
        return
    state.rank, state.local_rank, state.world_size = rank, local_rank, world_size
    state.pid = os.getpid()
    state.job = setting("RANKDEBUG_JOB") or f"adhoc-{os.getppid()}"
    connect_ctl()
    send("started", local_rank=local_rank, world_size=world_size,
         argv=list(sys.argv), cwd=os.getcwd(), chosen=chosen)
    atexit.register(_at_exit)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_after_fork_in_child)
    threading_atexit = getattr(threading, "_register_atexit", None)
    if threading_atexit is not None:
        threading_atexit(_before_thread_join)


def start(rank: int, local_rank: int | None, world_size: int | None) -> None:
    """Called by the bootstrap in a chosen rank before the user's script runs."""
    prepare(rank, local_rank, world_size, chosen=True)
    serve_handler(armed=False)
    if setting("RANKDEBUG_ATTACH", "start") == "hit":
        from rankdebug.runtime import attach_signal

        if attach_signal.preload_wanted():
            attach_signal.preload(_load_debugger)  # the hit then costs only the attach
        if _start_untraced():
            return
        # Traced from the start after all (function breakpoints, "raised" exceptions, Pause
        # before the script): through the gate when there is one.
        from rankdebug.runtime import hithook

        hithook.hooks.fired = True  # an attach signal now has nothing more to do
        if connect_adapter():
            wait_for_client()
            _suspend_if_paused()
            return
    # --attach start: an adapter the supervisor starts (it lets in the job's owner only),
    # else debugpy's own (no supervisor).
    if not connect_adapter():
        listen()
    # pydevd's tracer never sees the script's top frame end (it starts after this one), so
    # it cannot stop at an uncaught exception there: the excepthook does.
    _catch_uncaught()
    if setting("RANKDEBUG_WAIT", "1") == "1":
        wait_for_client()


def _start_untraced() -> bool:
    """--attach hit: run without a tracer until a hit-hook fires, Pause, a breakpoint the
    hooks cannot serve, or an uncaught exception. With a supervisor the rank first waits for
    its client's breakpoints (the supervisor's gate answers the client meanwhile). False:
    attach now instead (hooks cannot be planted here)."""
    from rankdebug.runtime import hithook

    # The supervisor's gate asks for an attach with this signal (Pause, new breakpoints).
    signal_number = _arm_attach_signal()
    wait = state.ctl is not None and setting("RANKDEBUG_WAIT", "1") == "1"
    send("armed", signal=signal_number, wait=wait)
    plan: dict[str, Any] = {"breaks": _breaks(), "uncaught": False}
    if wait:
        state.waiting = True  # an attach signal now is kept for after the reply
        try:
            got = _read_ctl()
        finally:
            state.waiting = False
        if got is not None:
            plan = got
    trace("go")
    breaks = [(str(f), int(n)) for f, n in plan.get("breaks") or []]
    state.pause = plan.get("pause") is True
    if plan.get("trace") or state.pause or state.attach_asked:
        return False
    if plan.get("uncaught"):
        _catch_uncaught()
    if not breaks:
        return True
    return hithook.install(breaks, on_hit)


def _read_ctl() -> dict[str, Any] | None:
    """The supervisor's reply on the control socket (None if it is gone)."""
    if state.ctl is None:
        return None
    try:
        with state.ctl.makefile("rb") as f:
            reply = wire.read(f)
    except (OSError, ValueError):
        return None
    return reply


def arm(folder: str, *, armed: bool = True) -> None:
    """Serve the rank's control socket (``rankdebug launch --arm``; see ``handler``).
    ``armed``: the socket is how the rank is debugged later (not a chosen rank's)."""
    from rankdebug.runtime import handler

    path = handler.start(folder, state.rank, attach=_attach_reply)
    if path is not None:
        send("handler", socket=path, armed=armed)


def job_folder() -> str | None:
    """The job's registry folder (ranks' control sockets live there)."""
    folder = setting("RANKDEBUG_ARM")
    if folder:
        return folder
    ctl = setting("RANKDEBUG_CTL")
    if ctl:
        return os.path.dirname(ctl)
    job = setting("RANKDEBUG_JOB")
    if not job:
        return None
    from rankdebug.runtime import registry

    try:
        return registry.job_dir(job)
    except (OSError, registry.RegistryError):
        return None


def serve_handler(*, armed: bool) -> str | None:
    """Serve the rank's control socket in the job's folder, once per process; its path.
    ``armed``: the socket is how the rank is debugged later (``--arm``, a held rank); a
    chosen rank serves one too (``armed=False``), so that eval, stacks and Compare Across
    Ranks reach it whether it runs or is paused (the handler's threads are never traced)."""
    from rankdebug.runtime import handler

    if handler.handler.sock is None or handler.handler.pid != os.getpid():
        folder = job_folder()
        if folder:
            arm(folder, armed=armed)
    return handler.handler.path if handler.handler.sock is not None else None


def attach_now() -> tuple[str, int]:
    """Start the debugger now, from any thread, without stopping the rank (an armed rank's
    ``attach``): connect to an adapter the supervisor starts, or listen; a client that
    attaches then sets its breakpoints in every thread."""
    with _attach_lock:
        if state.listening is None and not connect_adapter():
            listen()
        # No gate in front of a debugger started late: it reads rank-bound breakpoints itself.
        from rankdebug.runtime import pydevd_bound

        pydevd_bound.install(state.rank, state.local_rank)
        assert state.listening is not None
        if not state.attached:
            threading.Thread(target=_report_attached, name="rankdebug-handler-attached",
                             daemon=True).start()
        return state.listening


def _attach_reply() -> dict[str, Any]:
    """The handler's answer to ``attach``."""
    host, port = attach_now()
    return {"event": "listening", "host": host, "port": port, "job": state.job}


def _report_attached() -> None:
    threading.current_thread().pydev_do_not_trace = True  # type: ignore[attr-defined]
    with contextlib.suppress(Exception):
        wait_for_client()


def _breaks() -> list[tuple[str, int]]:
    text = setting("RANKDEBUG_BREAKS")
    if not text:
        return []
    try:
        data = json.loads(text)
        return [(str(f), int(n)) for f, n in data]
    except (ValueError, TypeError):
        return []


def connect_adapter() -> bool:
    """Connect to the adapter the supervisor started for this rank (see
    ``rankdebug.supervise.adapters``), as ``debugpy.listen`` does after spawning one.
    False when there is none (no supervisor, or it could not start one)."""
    with _attach_lock:
        return _connect_adapter()


def _connect_adapter() -> bool:
    if state.ctl is None or state.listening is not None:
        return False
    try:
        send("adapter")
        state.ctl.settimeout(60.0)
        reply = _read_ctl()
        state.ctl.settimeout(None)
    except OSError:
        return False
    if reply is None or "server_port" not in reply:
        return False
    state.pause = state.pause or reply.get("pause") is True
    debugpy = import_debugpy()
    debugpy.configure(subProcess=False)
    from debugpy.server import api

    api.ensure_logging()  # type: ignore[no-untyped-call]
    # rankdebug's own frames are hidden as pydevd connects (``hidden``, through the
    # ``start_client`` that ``import_debugpy`` installed): no patterns to pass here.
    kwargs: dict[str, Any] = {"suspend": False, "patch_multiprocessing": False,
                              "notify_stdin": False}
    import pydevd

    pydevd.settrace(
        host=str(reply["server_host"]),
        port=int(reply["server_port"]),
        wait_for_ready_to_run=False,
        block_until_connected=True,
        access_token=str(reply["token"]),
        **kwargs,
    )
    api.listen.called = True
    state.listening = (str(reply["client_host"]), int(reply["client_port"]))
    return True


def on_hit(frame: FrameType) -> None:
    """First hit of a planted breakpoint: attach the full debugger, then let it trace
    ``frame`` so the breakpoint on the next line stops there with reason "breakpoint"."""
    trace("hit")
    if not connect_adapter():
        listen()
    trace("connected")
    wait_for_client()
    trace("configured")
    import pydevd

    debugger = pydevd.get_global_debugger()
    if debugger is None:
        return
    _suspend_if_paused()
    debugger.set_trace_for_frame_and_parents(threading.get_ident(), frame)


def _suspend_if_paused() -> None:
    """Pause asked before the rank was traced: stop at the next traced line."""
    if not state.pause:
        return
    state.pause = False
    import pydevd
    from _pydevd_bundle.pydevd_comm_constants import CMD_THREAD_SUSPEND

    debugger = pydevd.get_global_debugger()
    if debugger is not None:
        debugger.set_suspend(threading.current_thread(), CMD_THREAD_SUSPEND,
                             suspend_other_threads=True, is_pause=True)


def _catch_uncaught() -> None:
    """Stop at an uncaught exception, in the main thread or another one, with its frames
    (the client's "Uncaught Exceptions" filter, on by default) although no tracer ran; the
    traceback printed after it starts at the user's code, as under plain Python."""
    previous = sys.excepthook

    def excepthook(kind: type[BaseException], value: BaseException,
                   tb: TracebackType | None) -> None:
        tb = frames.without_own(tb)
        value.__traceback__ = tb
        if not issubclass(kind, KeyboardInterrupt):
            _stop_at_exception(kind, value, tb)
        previous(kind, value, tb)

    sys.excepthook = excepthook
    previous_thread_hook = threading.excepthook

    def thread_excepthook(args: Any) -> None:
        if args.exc_value is not None:
            _stop_at_exception(args.exc_type, args.exc_value, args.exc_traceback)
        previous_thread_hook(args)

    threading.excepthook = thread_excepthook


def _stop_at_exception(kind: type[BaseException], value: BaseException,
                       tb: TracebackType | None) -> None:
    """Stop where an uncaught exception was raised, if the client's filters want it."""
    if not issubclass(kind, SystemExit) and (_traced_already() or _attach_for_exception()):
        import debugpy

        debugpy.trigger_exception_handler((kind, value, tb))


def _traced_already() -> bool:
    """The debugger is on with a client (--attach start, or attached since), and its tracer
    has not stopped at this thread's exception itself."""
    debugpy = sys.modules.get("debugpy")
    if state.listening is None or debugpy is None or not debugpy.is_client_connected():
        return False
    try:
        from _pydevd_bundle.pydevd_additional_thread_info import set_additional_thread_info

        info = set_additional_thread_info(threading.current_thread())
        return not info.suspended_at_unhandled
    except Exception:  # another pydevd: stop (a second stop beats none)
        return True


def _attach_for_exception() -> bool:
    """Attach the debugger at an uncaught exception, unless it is on already (it stopped
    there itself then)."""
    from rankdebug.runtime import hithook

    with hithook.hooks.lock:
        if hithook.hooks.fired:
            return False
        hithook.hooks.fired = True
    if not connect_adapter():
        return False
    wait_for_client()
    return True


def _arm_attach_signal() -> int | None:
    """Install the handler of the attach-now signal (a real-time one, unused by torch), unless
    the script's environment already handles it; returns its number."""
    import signal

    number = int(getattr(signal, "SIGRTMIN", 34)) + 3
    try:
        if signal.getsignal(number) not in (signal.SIG_DFL, None):
            return None
        signal.signal(number, _on_attach_signal)
    except (ValueError, OSError):
        return None
    return number


def _on_attach_signal(signum: int, frame: FrameType | None) -> None:
    """Attach the full debugger now, in the main thread, where it was interrupted.

    A signal handler runs between any two bytecodes of the main thread: in the middle of an
    import, or of a report on the control socket. Importing debugpy there can meet a
    half-imported module (``platform``, mid-``import torch``) and crash the rank, so debugpy
    is imported by a helper thread, which waits for such an import to finish; until it has,
    or while a report is being sent, the signal is sent again a little later."""
    from rankdebug.runtime import attach_signal, hithook

    if state.waiting:  # the control socket is mid-read: attach once the reply is in
        state.attach_asked = True
        return
    if frame is None or hithook.hooks.fired:
        return
    if (state.lock.locked() or attach_signal.in_import_system(frame)
            or not attach_signal.debugger_loaded(_load_debugger)):
        attach_signal.again(signum)
        return
    if not hithook.hooks.lock.acquire(blocking=False):  # interrupted inside a hook
        attach_signal.again(signum)
        return
    try:
        if hithook.hooks.fired:
            return
        hithook.hooks.fired = True
    finally:
        hithook.hooks.lock.release()
    try:
        on_hit(frame)
    except Exception as exc:  # raised into the user's code, it would end the rank
        print(f"rankdebug: rank {state.rank} could not attach the debugger: "
              f"{type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        if state.listening is None:
            hithook.hooks.fired = False  # nothing connected: a later ask may try again


def _load_debugger() -> None:
    import_debugpy()
    import debugpy.server.api  # noqa: F401
    import pydevd  # noqa: F401
    from debugpy.common import util  # noqa: F401

    trace("debugpy loaded")


def _after_fork_in_child() -> None:
    # A forked child (DataLoader worker) keeps no debugger: no tracer, no reports. Its copy
    # of the control socket goes, so the supervisor sees the rank's end when it ends.
    if state.ctl is not None:
        with contextlib.suppress(OSError):
            state.ctl.close()
        state.ctl = None
    if state.listening is None:
        return
    sys.settrace(None)
    threading.settrace(None)
    try:
        from _pydevd_bundle.pydevd_constants import set_global_debugger

        set_global_debugger(None)
    except Exception:
        pass


def _before_thread_join() -> None:
    """The script has ended: stop the debugger so its threads cannot keep the rank alive."""
    if os.getpid() != state.pid or state.listening is None:
        return
    try:
        import pydevd

        pydevd.stoptrace()
    except Exception:
        pass


def _at_exit() -> None:
    if os.getpid() == state.pid:
        send("exit")

"""Hold a rank at an uncaught exception, for inspection, instead of letting it die.

In a job started by ``rankdebug launch``, every rank that is not debugged from the start
(armed or not) has its ``sys.excepthook`` and ``threading.excepthook`` set by the bootstrap
(``bootstrap.install_hold``); this module is imported only when an exception reaches them.
Then the raising thread stays inside the hook with the exception, its traceback and frames
kept, so the launcher does not tear the job down and the state that explains the failure
is still there:

1. the rank reports itself: ``send("raised", exception=TYPE, message=str(exc)[:500],
   file=ABS_PATH, line=N, function=NAME)`` to the supervisor (the innermost frame of the
   user's code), and its registry entry gets ``state: "raised"`` and ``raised: {exception,
   message, file, line, function}``;
2. a rank of a job that is not armed starts its control socket now (``handler``), so
   ``rankdebug attach``, ``eval`` and ``stacks`` reach it as they reach an armed rank;
   ``eval`` reads the raising frame's namespace, ``stacks`` shows the traceback's frames;
3. it says so on its stderr, in one line:
   ``rankdebug: rank 3 raised ValueError at model.py:88; held for inspection: rankdebug
   attach JOB 3 (or stop the job)``;
4. once a debugger has attached and its client is configured (``debugpy.is_client_connected``:
   an attach through the handler, or debugpy injected by ``rankdebug attach --pid``), the
   rank stops as for an uncaught exception, in the raising frame with its locals; when the
   user continues, the original hook runs and the rank ends with its usual failure status.

The other ranks wait in their next collective meanwhile: the collective-timeout guard
(``rankdebug launch --collective-timeout``, one day by default) raised every process-group
timeout, the user's own short ones included. SIGTERM (the job's stop, the launcher's
teardown) ends a held rank at once, after printing the traceback it held; Ctrl-C too.
A thread held when the main thread's script ends is let go (its exception would not have
ended the rank either).

A chosen rank (debugged from the start) that its debugger stops at an uncaught exception is
held there by the debugger, not by this module; it is listed here all the same while it is
stopped (``watch_debugger``), so the command line sees it as it sees any held rank: ``eval``
runs in the raising frame, ``stacks`` gives the traceback (not debugpy's frames), ``ping``
and the registry entry carry ``raised`` (``rankdebug jobs``: "raised IndexError at
model.py:177"), until the debugger lets it go.

Not held: ``SystemExit`` and ``KeyboardInterrupt``; processes forked by a rank; a rank
whose debugger is attached already (it stopped there itself); the ranks that raise after a
held rank was continued (its end breaks their collectives: their errors are its echo, and
the launcher is ending the job; a ``hold-ended`` file in the job's folder says so, per
torchrun restart); every rank with ``RANKDEBUG_HOLD=0`` in the job's environment.

Pure Python, 3.9 and later; stdlib only until a debugger attaches.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time

from rankdebug.runtime import debug, frames, reporting

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import FrameType, TracebackType
    from typing import Any

    Where = tuple[int, int | None, int | None, int]  # rank, local rank, world size, pid

POLL_S = 0.1  # how often a held thread looks for a debugger
MAX_MESSAGE = 500
REGISTRY_WAIT_S = 3.0  # for the supervisor to record the rank before its raised entry


class Held:
    """One thread held at its uncaught exception."""

    def __init__(self, kind: type[BaseException], value: BaseException,
                 tb: TracebackType | None, info: dict[str, Any]) -> None:
        thread = threading.current_thread()
        self.kind, self.value, self.tb = kind, value, tb
        self.info = info
        self.ident = threading.get_ident()
        self.thread_name = thread.name
        self.main = thread is threading.main_thread()
        self.release = threading.Event()  # let go without a debugger (the script ended)
        self.debugger = False  # stopped there by a chosen rank's debugger (not held here)

    def frames(self) -> list[FrameType]:
        """The traceback's frames, innermost first."""
        out = []
        tb = self.tb
        while tb is not None:
            out.append(tb.tb_frame)
            tb = tb.tb_next
        out.reverse()
        return out

    def stack(self) -> list[dict[str, Any]]:
        """The traceback as ``frames.thread_stacks`` shapes a stack (innermost first)."""
        out = []
        tb = self.tb
        while tb is not None:
            code = tb.tb_frame.f_code
            out.append({"name": code.co_name, "filename": code.co_filename,
                        "line": tb.tb_lineno or frames.line_of(tb.tb_frame)})
            tb = tb.tb_next
        out.reverse()
        return out


_held: list[Held] = []
_lock = threading.Lock()


def held() -> list[Held]:
    """The threads held now, the main thread's first."""
    with _lock:
        return sorted(_held, key=lambda h: not h.main)


# --- the hooks (called by the bootstrap's) ----------------------------------------------


def on_uncaught(previous: Callable[[type[BaseException], BaseException,
                                    TracebackType | None], Any],
                kind: type[BaseException], value: BaseException,
                tb: TracebackType | None, where: Where) -> None:
    """``sys.excepthook``: hold the main thread, then run ``previous`` (the rank ends)."""
    if not _should_hold(kind, where):
        previous(kind, value, tb)
        return
    tb = frames.without_own(tb)
    with contextlib.suppress(Exception):
        value.__traceback__ = tb
    one = _hold(kind, value, tb, where)
    try:
        if one is not None:
            _on_sigterm(where[0], kind, value, tb)
            _wait(one)
    except KeyboardInterrupt:
        pass  # Ctrl-C: end as the rank would have
    finally:
        _forget(one)
        previous(kind, value, tb)


def on_thread_uncaught(previous: Callable[[Any], Any], args: Any, where: Where) -> None:
    """``threading.excepthook``: hold that thread, then run ``previous``."""
    kind = args.exc_type
    value = args.exc_value
    if value is None or not _should_hold(kind, where):
        previous(args)
        return
    tb = frames.without_own(args.exc_traceback)
    one = _hold(kind, value, tb, where)
    try:
        if one is not None:
            _wait(one)
    finally:
        _forget(one)
        previous(args)


def _should_hold(kind: type[BaseException], where: Where) -> bool:
    if os.getpid() != where[3]:
        return False  # a process forked by the rank (the hooks exist only when enabled)
    if not isinstance(kind, type) or issubclass(kind, (SystemExit, KeyboardInterrupt)):
        return False
    if _hold_ended():
        return False
    return not _debugger_connected()  # its debugger stopped there already (if asked to)


_ENDED = "hold-ended"


def _attempt() -> str:
    """Which run of the job this is (torchrun restarts its workers)."""
    return os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")


def _hold_ended() -> bool:
    """A held rank of this run of the job was continued and ends: no more holds."""
    folder = debug.job_folder()
    if not folder:
        return False
    try:
        with open(os.path.join(folder, _ENDED), encoding="utf-8") as f:
            return f.read().strip() == _attempt()
    except (OSError, ValueError):
        return False


def _mark_ended() -> None:
    folder = debug.job_folder()
    if not folder:
        return
    path = os.path.join(folder, _ENDED)
    tmp = f"{path}.{os.getpid()}"
    with contextlib.suppress(OSError):
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, _attempt().encode())
        finally:
            os.close(fd)
        os.replace(tmp, path)


def _debugger_connected() -> bool:
    debugpy = sys.modules.get("debugpy")
    if debugpy is None:
        return False
    try:
        return bool(debugpy.is_client_connected())
    except Exception:
        return False


# --- holding ----------------------------------------------------------------------------


def describe(kind: type[BaseException], value: BaseException,
             tb: TracebackType | None) -> dict[str, Any]:
    """The ``raised`` fields: the exception, and the innermost frame of the user's code
    (the innermost frame at all when none is the user's)."""
    where = None
    innermost = None
    while tb is not None:
        innermost = tb
        if frames.user_file(tb.tb_frame.f_code.co_filename):
            where = tb
        tb = tb.tb_next
    where = where or innermost
    try:
        message = str(value)
    except Exception as exc:  # a __str__ that fails
        message = f"<str() failed: {type(exc).__name__}>"
    info: dict[str, Any] = {"exception": kind.__name__, "message": message[:MAX_MESSAGE],
                            "file": None, "line": None, "function": None}
    if where is not None:
        code = where.tb_frame.f_code
        info.update(file=os.path.abspath(code.co_filename), line=where.tb_lineno,
                    function=code.co_name)
    return info


def _hold(kind: type[BaseException], value: BaseException, tb: TracebackType | None,
          where: Where) -> Held | None:
    """Keep the exception, report it; None when the rank cannot be held (it ends then)."""
    rank = where[0]
    try:
        one = Held(kind, value, tb, describe(kind, value, tb))
        with _lock:
            _held.append(one)
        socket_path = _reachable(where)
        _report(one.info, socket_path)
        if not one.main:
            _release_at_shutdown()
    except Exception as exc:  # guest code: end as the rank would have
        _say(f"rankdebug: rank {rank}: cannot hold the exception for inspection: {exc!r}")
        with _lock:
            _held[:] = [h for h in _held if h.ident != threading.get_ident()]
        return None
    job = os.environ.get("RANKDEBUG_JOB") or "JOB"
    place = f"{os.path.basename(one.info['file'] or '?')}:{one.info['line'] or '?'}"
    thread = "" if one.main else f" in thread {one.thread_name!r}"
    _say(f"rankdebug: rank {rank} raised {one.info['exception']} at {place}{thread}; held "
         f"for inspection: rankdebug attach {job} {rank} (or stop the job)")
    return one


def _reachable(where: Where) -> str | None:
    """Make sure the rank reports to its supervisor and serves its control socket (a rank
    of a job that is not armed starts both now); the socket's path."""
    rank, local_rank, world_size, _pid = where
    debug.prepare(rank, local_rank, world_size, chosen=False)  # done already when armed
    return debug.serve_handler(armed=True)


def _report(info: dict[str, Any], socket_path: str | None) -> None:
    """``raised`` to the supervisor, and into the registry (after the supervisor has
    recorded what the rank sent before, so its writes cannot undo this one)."""
    from rankdebug.runtime import registry

    if reporting.state.ctl is not None:
        reporting.send("raised", **info)
    job, rank = reporting.state.job, reporting.state.rank
    if not job:
        return
    deadline = time.monotonic() + REGISTRY_WAIT_S
    while reporting.state.ctl is not None and time.monotonic() < deadline:
        try:
            entry = registry.read_rank(job, rank)
        except (OSError, registry.RegistryError):
            break
        if entry is not None and entry.get("pid") == os.getpid() and (
                socket_path is None or entry.get("socket") == socket_path):
            break
        time.sleep(0.05)
    with contextlib.suppress(Exception):  # a registry that cannot be written: still held
        registry.update_rank(job, rank, state="raised", raised=dict(info), pid=os.getpid())


def _wait(one: Held) -> None:
    """Until a debugger is attached and configured (then stop there, as for an uncaught
    exception), or the thread is let go."""
    while not one.release.is_set():
        if _debugger_connected():
            _stop_in_debugger(one)
            if one.main:
                _mark_ended()  # the rank ends now: its peers' errors are its echo
            return
        one.release.wait(POLL_S)


def _stop_in_debugger(one: Held) -> None:
    """Stop in the raising frame, with the traceback's frames: through the client's
    uncaught-exception filter when it has one, else at the innermost frame of the user's."""
    debugpy = sys.modules["debugpy"]
    as_uncaught = True
    with contextlib.suppress(Exception):
        import pydevd

        db = pydevd.get_global_debugger()
        as_uncaught = bool(getattr(db, "break_on_uncaught_exceptions", None))
    with contextlib.suppress(Exception):
        from rankdebug.runtime import hithook

        hithook.hooks.fired = True  # nothing more for an attach signal to do
    debugpy.trigger_exception_handler((one.kind, one.value, one.tb), as_uncaught=as_uncaught)


def _forget(one: Held | None) -> None:
    if one is None:
        return
    with _lock:
        if one in _held:
            _held.remove(one)


def _release_at_shutdown() -> None:
    """The main thread's script ends: let the held threads go, or the interpreter would wait
    for them forever."""
    register = getattr(threading, "_register_atexit", None)
    if register is None or getattr(_release_at_shutdown, "done", False):
        return
    _release_at_shutdown.done = True  # type: ignore[attr-defined]
    with contextlib.suppress(RuntimeError):  # shutting down already
        register(_release_all)


def _release_all() -> None:
    for one in held():
        if not one.main:
            one.release.set()


def _on_sigterm(rank: int, kind: type[BaseException], value: BaseException,
                tb: TracebackType | None) -> None:
    """SIGTERM ends the held main thread at once, as it would have ended the rank, after
    printing the traceback that would otherwise be lost (unless the script handles SIGTERM
    itself)."""
    import signal

    def ended(signum: int, _frame: Any) -> None:
        with contextlib.suppress(Exception):
            import traceback

            text = "".join(traceback.format_exception(kind, value, tb))
            _say(f"rankdebug: rank {rank} stopped while held at its exception:\n"
                 + text.rstrip("\n"))
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    with contextlib.suppress(ValueError, OSError):
        if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
            signal.signal(signal.SIGTERM, ended)


def _say(text: str) -> None:
    """A line on the rank's real stderr (inside the hook, ``sys.stderr`` may be a buffer:
    torch's excepthook collects the traceback to prefix it with the rank)."""
    data = (text + "\n").encode(errors="replace")
    with contextlib.suppress(Exception):
        if sys.__stderr__ is not None:
            sys.__stderr__.flush()
    with contextlib.suppress(OSError):
        while data:
            data = data[os.write(2, data):]


# --- a chosen rank stopped by its debugger at an uncaught exception ----------------------


def watch_debugger() -> None:
    """List a thread that debugpy stops at an uncaught exception as held while it is
    stopped (see the module docstring). Wraps pydevd's
    ``PyDB.do_stop_on_unhandled_exception``, which every such stop goes through (the
    tracer's, ``debugpy.trigger_exception_handler``'s, a held rank's attach); once, and
    nothing when pydevd is not there."""
    try:
        import debugpy.server  # noqa: F401  (puts debugpy's own pydevd on sys.path)
        import pydevd
    except Exception:
        return
    original = getattr(pydevd.PyDB, "do_stop_on_unhandled_exception", None)
    if original is None or getattr(original, "rankdebug_hold", False):
        return

    def do_stop_on_unhandled_exception(self: Any, thread: Any, frame: Any, frames_byid: Any,
                                       arg: Any, *rest: Any, **kwargs: Any) -> Any:
        one = _stopped_at(arg)
        try:
            return original(self, thread, frame, frames_byid, arg, *rest, **kwargs)
        finally:
            _let_go(one)

    do_stop_on_unhandled_exception.rankdebug_hold = True  # type: ignore[attr-defined]
    pydevd.PyDB.do_stop_on_unhandled_exception = do_stop_on_unhandled_exception


def _stopped_at(arg: Any) -> Held | None:
    """The debugger stops this thread at ``arg`` (kind, value, traceback): list it, and
    say so in the registry; None when it is held here already, or cannot be."""
    try:
        kind, value, tb = arg
        if any(h.ident == threading.get_ident() for h in held()):
            return None  # this module holds it (and attached the debugger)
        tb = frames.without_own(tb)
        one = Held(kind, value, tb, describe(kind, value, tb))
        one.debugger = True
        with _lock:
            _held.append(one)
    except Exception:  # guest code: the debugger stops there all the same
        return None
    _in_background(_record_raised, dict(one.info))
    return one


def _let_go(one: Held | None) -> None:
    """The debugger let the thread go on: no longer held."""
    if one is None:
        return
    _forget(one)
    _in_background(_record_raised, None)


def _in_background(target: Callable[..., None], *args: Any) -> None:
    """A thread of ours that the debugger neither traces nor suspends (it stops every
    thread at an exception)."""
    from rankdebug.runtime import handler

    with contextlib.suppress(Exception):
        handler._start_thread("rankdebug-handler-raised", target, *args)


def _record_raised(info: dict[str, Any] | None) -> None:
    """``raised`` (None: gone) into the rank's registry entry. The registry merges under the
    job's lock (``registry.update_rank``), as the supervisor's own records of the stop do, so
    one write keeps the field whatever order the two come in."""
    from rankdebug.runtime import registry

    job, rank = reporting.state.job, reporting.state.rank
    if not job or (info is not None and not _held_now(info)):
        return  # let go meanwhile: its own write clears the field
    with contextlib.suppress(Exception):
        registry.update_rank(job, rank, raised=info)


def _held_now(info: dict[str, Any]) -> bool:
    return any(h.debugger and h.info == info for h in held())


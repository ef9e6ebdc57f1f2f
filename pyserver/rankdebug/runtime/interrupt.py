"""Run the user's code in a thread of its own, and stop it for real when its answer is late.

``rankdebug eval`` answers "no result after S s" when the code takes longer than its
timeout; the code must not run on in the rank after that (``while True: pass`` would take a
core of every rank for good). So the thread is interrupted: an ``Interrupted`` exception is
raised in it (``PyThreadState_SetAsyncExc``), again every ``RESEND_S`` while it still runs
(the user's code may catch it with a bare ``except``), until it ends.

The exception is only ever raised while the user's code runs (``window``): the window is
closed, and an exception still pending is called off, before the code that captured its
output puts things back, so nothing of ours is cut short. A call into native code that
does not return (``time.sleep(1e9)``, a lock) cannot be cut short: the exception comes
when it returns. At most ``MAX_RUNNING`` such threads are let run at once; a later
evaluation is refused until one ends.

Pure Python, 3.9 and later (ctypes only when a thread must be stopped).
"""

from __future__ import annotations

import contextlib
import threading
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

RESEND_S = 0.1  # how often a thread that runs on is interrupted again
SLOW_RESEND_S = 1.0  # after SLOW_AFTER_S of that (it waits in native code)
SLOW_AFTER_S = 5.0
GRACE_S = 1.0  # how long the timed-out answer waits for the code to stop
MAX_RUNNING = 8


class Interrupted(BaseException):
    """Raised in an evaluation's thread when its time is up (not an Exception: the
    user's ``except Exception`` lets it through)."""


class Run:
    """One evaluation's thread and its interrupt window."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.open = False  # the user's code runs: it may be interrupted now
        self.ident: int | None = None
        self.done = threading.Event()
        self.stopping = False


_local = threading.local()  # the Run of this thread, if it is an evaluation's
_running: set[Run] = set()
_running_lock = threading.Lock()


def _set_async(ident: int, exc: type[BaseException] | None) -> None:
    """Raise ``exc`` in thread ``ident`` at its next bytecode (None: call off the one
    pending)."""
    import ctypes

    if exc is None:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.c_void_p(0))
    else:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident),
                                                   ctypes.py_object(exc))


@contextlib.contextmanager
def window() -> Iterator[None]:
    """Where the user's code runs: an interrupt may come inside, never after (one still
    pending is called off as the window closes)."""
    run: Run | None = getattr(_local, "run", None)
    if run is None:
        yield
        return
    with run.lock:
        run.open = True
    try:
        yield
    finally:
        _close(run)


def _close(run: Run) -> None:
    # An interrupt that lands here, before the window is shut, is caught and the window
    # shut again: the reaper sends none once it is.
    while True:
        try:
            with run.lock:
                run.open = False
                if run.ident is not None and run.stopping:
                    _set_async(run.ident, None)
            return
        except Interrupted:
            continue


def busy() -> int:
    """Evaluations still running (timed out, waiting in native code)."""
    with _running_lock:
        return len(_running)


def start(name: str, body: Callable[[], None],
          spawn: Callable[[str, Callable[[], None]], threading.Thread]) -> Run:
    """Run ``body`` in a thread ``spawn`` starts; its ``Run``."""
    run = Run()

    def target() -> None:
        _local.run = run
        run.ident = threading.get_ident()
        try:
            body()
        except Interrupted:  # outside ``body``'s own handling: nothing to report
            pass
        finally:
            _close(run)
            with _running_lock:
                _running.discard(run)
            run.done.set()

    with _running_lock:
        _running.add(run)
    try:
        thread = spawn(name, target)
    except BaseException:  # no thread to be had: nothing runs
        with _running_lock:
            _running.discard(run)
        raise
    _quiet(thread)
    return run


def _quiet(thread: threading.Thread) -> None:
    """An ``Interrupted`` that still escapes the thread ends it without a report (the
    rank's ``threading.excepthook`` would print it, or hold the thread as raised)."""
    original = getattr(thread, "_invoke_excepthook", None)
    if original is not None:

        def invoke(t: threading.Thread) -> None:
            import sys

            if not isinstance(sys.exc_info()[1], Interrupted):
                original(t)

        thread._invoke_excepthook = invoke  # type: ignore[attr-defined]


def stop(run: Run, spawn: Callable[..., threading.Thread]) -> bool:
    """Interrupt ``run``'s code (and keep at it from a thread ``spawn`` starts while it
    runs on); whether it ended within ``GRACE_S``."""
    run.stopping = True
    _send(run)
    if run.done.wait(GRACE_S):
        return True
    spawn("rankdebug-handler-reaper", _reap, run)
    return False


def _send(run: Run) -> None:
    with run.lock:
        if run.open and run.ident is not None and not run.done.is_set():
            _set_async(run.ident, Interrupted)


def _reap(run: Run) -> None:
    started = time.monotonic()
    while not run.done.is_set():
        _send(run)
        slow = time.monotonic() - started > SLOW_AFTER_S
        run.done.wait(SLOW_RESEND_S if slow else RESEND_S)


def describe(run: Any) -> str:
    """What became of a timed-out evaluation, for its answer."""
    return "stopped it" if run.done.is_set() else (
        "not stopped yet: it waits in a call that cannot be interrupted, or catches "
        "BaseException; it is interrupted again until it stops")

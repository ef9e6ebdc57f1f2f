"""When the attach-now signal may act, and debugpy's import off the main thread (also ahead
of the hit, where the node has a core to spare: ``preload``).

A signal handler runs between any two bytecodes of the main thread: in the middle of
``import torch``, of a report on the control socket, of a hit-hook. The handler acts only
once debugpy is imported (by a helper thread) and the main thread is outside the import
system's own code; until then it sends the signal again a little later (``again``)."""

from __future__ import annotations

import contextlib
import os
import threading

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import FrameType

TRIES = 20  # helper threads whose import failed before the handler imports debugpy itself


class _Loader:
    thread: threading.Thread | None = None
    loaded = False  # a helper thread imported debugpy (one may fail, racing the main thread)
    tries = 0


loader = _Loader()


def in_import_system(frame: FrameType) -> bool:
    """Interrupted inside the import system's own code, which may hold the interpreter's
    import lock between two of its bytecodes: an import made there (debugpy's) finds its
    tables half-updated and fails inside the rank's ``import torch``. Attach just after."""
    seen: FrameType | None = frame
    for _ in range(4):
        if seen is None:
            return False
        if seen.f_code.co_filename.startswith(("<frozen importlib", "<frozen zipimport")):
            return True
        seen = seen.f_back
    return False


def debugger_loaded(load: Callable[[], None], wait: float = 0.2) -> bool:
    """``load`` (debugpy's import) done by a helper thread within ``wait`` seconds. A thread
    whose import failed is started again: the attach waits for a clean import instead of
    importing in the signal handler (after ``TRIES`` failures, that is the last resort)."""
    if loader.loaded:
        return True
    if loader.thread is not None and not loader.thread.is_alive() and loader.tries < TRIES:
        loader.thread = None  # the last try failed: try again
    if loader.thread is None:
        loader.tries += 1
        # Not a daemon: a script that ends while debugpy's import is under way waits for it
        # (under a second); a daemon thread still importing C extensions while the
        # interpreter finalizes crashed the rank with SIGSEGV about 1 exit in 25 under load.
        loader.thread = threading.Thread(target=_load, args=(load,), name="rankdebug-load",
                                         daemon=False)
        loader.thread.start()
    loader.thread.join(wait)
    return loader.loaded or (loader.tries >= TRIES and not loader.thread.is_alive())


def preload_wanted() -> bool:
    """RANKDEBUG_PRELOAD: 1 always, 0 never; by default where this rank has a core no other
    rank of its node needs (more usable cores than local ranks): there debugpy's import runs
    beside the script instead of at the hit; on a busy node it would only slow the rank."""
    asked = os.environ.get("RANKDEBUG_PRELOAD", "")
    if asked in ("0", "1"):
        return asked == "1"
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    try:
        local = int(os.environ.get("LOCAL_WORLD_SIZE") or "1")
    except ValueError:
        local = 1
    return cores > local


def preload(load: Callable[[], None]) -> None:
    """Start ``load`` (debugpy's import) on the helper thread now, without waiting: a chosen
    rank's hit then costs only the attach."""
    debugger_loaded(load, wait=0.0)


def _load(load: Callable[[], None]) -> None:
    threading.current_thread().pydev_do_not_trace = True  # type: ignore[attr-defined]
    with contextlib.suppress(Exception):
        load()
        loader.loaded = True


def again(signum: int) -> None:
    """The signal sent to the main thread again in 50 ms."""
    import signal

    main = threading.main_thread().ident
    if main is None:
        return
    timer = threading.Timer(0.05, lambda: signal.pthread_kill(main, signum))
    timer.daemon = True
    timer.start()

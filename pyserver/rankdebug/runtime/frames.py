"""Python stacks of this process, shaped like ``py-spy dump --json``, and which files are the
user's own (used by the armed handler, and by ``jobs.analysis.stacks`` for py-spy's dumps).

Pure Python, 3.9 and later.
"""

from __future__ import annotations

import re
import sys
import threading

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import FrameType, TracebackType
    from typing import Any

# Files of installed packages, the standard library and frozen modules: not the user's code.
LIBRARY_FILE = re.compile(
    r"[/\\](site|dist)-packages[/\\]|[/\\]lib[/\\]python\d+(\.\d+)?t?[/\\]|^<frozen ")
# rankdebug's own files (the boot folder links the package in): never the user's either.
# ``rankdebug/__init__.py`` holds ``rankdebug.breakpoint``, which every rank calls.
_OWN_FILE = re.compile(
    r"[/\\]rankdebug[/\\](runtime|boot)[/\\]|[/\\]rankdebug[/\\]__init__\.py$"
    r"|[/\\]sitecustomize\.py$")
# debugpy's and pydevd's files: the frames a rank paused under the debugger shows above the
# user's (the extension's debugpy is bundled, outside site-packages: not LIBRARY_FILE's).
DEBUGGER_FILE = re.compile(r"[/\\](debugpy|pydevd\w*|_pydevd\w*|_pydev_\w*)[/\\]")


def user_file(path: str) -> bool:
    return not (LIBRARY_FILE.search(path) or own_file(path))


def own_file(path: str) -> bool:
    """A file of rankdebug's runtime in a rank: its frames are never shown to the user."""
    return bool(_OWN_FILE.search(path))


def debugger_cut(files: list[str], *, needs_user: bool = True) -> int:
    """How many of a stack's innermost frames (``files``, innermost first) are the debugger's
    above the user's code: a rank paused under debugpy waits in its frames (and threading's,
    which it calls). 0 when there are none; also when no frame of the user's follows them,
    unless ``needs_user`` is False (then up to the last of them)."""
    cut = 0
    for i, path in enumerate(files):
        if DEBUGGER_FILE.search(path):
            cut = i + 1
        elif user_file(path):
            return cut
    return 0 if needs_user else cut


def without_own(tb: TracebackType | None) -> TracebackType | None:
    """``tb`` without its outer frames of rankdebug's runtime (the hook that ran the main
    script)."""
    while tb is not None and own_file(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    return tb


def walk(frame: FrameType | None) -> list[FrameType]:
    """``frame`` and its callers, innermost first."""
    out = []
    while frame is not None:
        out.append(frame)
        frame = frame.f_back
    return out


def line_of(frame: FrameType) -> int:
    """The line a frame is at. A call planted by ``hithook`` carries line 0 (so that every
    other line keeps its number): a frame waiting in one is at the line it was planted
    before, the next one its code has."""
    line = frame.f_lineno
    if line:
        return int(line)
    lines = getattr(frame.f_code, "co_lines", None)  # 3.10 and later
    if lines is None:
        return 0
    for start, _end, number in lines():
        if start > frame.f_lasti and number:
            return int(number)
    return 0


def _all_threads() -> dict[int | None, threading.Thread]:
    """Every thread ``threading`` knows, by ident: debugpy's too, which its patched
    ``threading.enumerate`` hides (and with them the handler's: it marks them as
    debugpy's, so that debugpy never suspends them)."""
    active = getattr(threading, "_active", None)
    lock = getattr(threading, "_active_limbo_lock", None)
    if isinstance(active, dict) and lock is not None:
        with lock:
            return dict(active)
    return {t.ident: t for t in threading.enumerate()}


def _debugger_thread(thread: threading.Thread | None, frame: FrameType | None) -> bool:
    """A thread of debugpy's (its reader, writer, timers; one it started without
    ``threading``): not the user's to see."""
    if thread is not None:
        return bool(getattr(thread, "is_pydev_daemon_thread", False))
    return any(DEBUGGER_FILE.search(f.f_code.co_filename) for f in walk(frame))


def _proc_state(native_id: int | None) -> str | None:
    """The kernel's state letter of one of our threads (R running, S sleeping, D disk wait)."""
    if native_id is None:
        return None
    from rankdebug.runtime import procstat

    got = procstat.fields(f"/proc/self/task/{native_id}/stat")
    return got[procstat.STATE].decode() if got else None


def thread_stacks(skip: set[int] | None = None) -> list[dict[str, Any]]:
    """Every Python thread of this process but ``skip`` (thread idents), as py-spy's JSON
    describes it: thread name and ids, whether it runs, and its frames innermost first."""
    frames = sys._current_frames()
    threads = _all_threads()
    main = threading.main_thread().ident
    out = []
    for ident, frame in frames.items():
        if skip and ident in skip:
            continue
        thread = threads.get(ident)
        if _debugger_thread(thread, frame):
            continue
        native = getattr(thread, "native_id", None)
        if native is None and ident == main:
            import os

            native = os.getpid()
        state = _proc_state(native)
        out.append({
            "thread_id": ident,
            "os_thread_id": native,
            "thread_name": thread.name if thread is not None else f"thread {ident}",
            "active": state in ("R", "D") if state else True,
            "owns_gil": False,
            "frames": [{"name": f.f_code.co_name, "filename": f.f_code.co_filename,
                        "line": line_of(f)} for f in walk(frame)],
        })
    return out

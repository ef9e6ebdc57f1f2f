"""Keeping the server's memory bounded over hours of editing.

- ``rankdebug.lsp.protocol``: pygls' protocol without its leak (a future per edit).
- :func:`tune_gc` and :func:`collect`: a full collection of a server holding a
  5,000-line script's analysis takes 60-100 ms; left to CPython it comes every few
  edits, in the middle of answering one. The server's own objects from startup are moved
  out of the collector's sight, full collections run when the documents are idle
  (``Documents(on_idle=...)``), and freed memory is handed back to the system there.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import os
import sys
from collections.abc import Callable

_MARK = "RANKDEBUG_SERVER_ALLOCATOR"

# Young objects as CPython would (bigger first generation: fewer, cheaper passes); the
# oldest generation only when told (collect()).
THRESHOLDS = (10_000, 20, 1_000_000)


def system_allocator() -> None:
    """Run the server on the C allocator rather than pymalloc (``PYTHONMALLOC=malloc``),
    starting the process again with it when it is not so already; its children get the
    default back. Measured on a 5,000-line script opened, edited and closed 8 times: idle
    afterwards 26 MB above the server's baseline with pymalloc, whose arenas stay while any
    object in them lives, 12 MB with malloc, whose freed pages ``collect`` hands back; an
    analysis costs about 15% more CPU. A user's own PYTHONMALLOC is kept. The extension
    starts the server with it set (``extension/src/common/server.ts``), so it starts once."""
    if sys.platform != "linux" or _trim is None:
        return
    if os.environ.get(_MARK) == "1":
        os.environ.pop(_MARK, None)
        os.environ.pop("PYTHONMALLOC", None)  # for the processes the server starts
        return
    if os.environ.get("PYTHONMALLOC"):
        return
    env = dict(os.environ, PYTHONMALLOC="malloc", **{_MARK: "1"})
    try:
        os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], env)
    except OSError:
        return  # the interpreter cannot be started again: pymalloc it is


def tune_gc() -> None:
    """Call once the server is built: what exists now lives as long as the process."""
    _tune_malloc()
    gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)


# glibc mallopt parameters (malloc.h).
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8


def _tune_malloc() -> None:
    """One heap for the analysis threads, as for the loop: glibc gives each thread that
    allocates an arena of its own, and what a 5,000-line document left in an arena's middle
    kept the whole arena's pages (the server stayed 25 MB up, idle, after it closed)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
        mallopt: Callable[[int, int], int] = libc.mallopt
    except (OSError, AttributeError):  # not glibc
        return
    mallopt(_M_ARENA_MAX, 1)


def _malloc_trim() -> Callable[[int], int] | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
        trim: Callable[[int], int] = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
    return trim


_trim = _malloc_trim()


def collect() -> None:
    """A full collection, then freed heap pages returned to the system (glibc)."""
    gc.collect()
    if _trim is not None:
        _trim(0)


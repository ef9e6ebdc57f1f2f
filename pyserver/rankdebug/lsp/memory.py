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
from collections.abc import Callable

# Young objects as CPython would (bigger first generation: fewer, cheaper passes); the
# oldest generation only when told (collect()).
THRESHOLDS = (10_000, 20, 1_000_000)


def tune_gc() -> None:
    """Call once the server is built: what exists now lives as long as the process."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)


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


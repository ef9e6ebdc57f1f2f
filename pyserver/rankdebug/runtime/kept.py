"""Values an ``eval`` kept for ``digest``: Compare Across Ranks narrows a difference down in a
few more requests, and a running rank's tensor may change meanwhile, so each rank keeps a
copy of what it summarized.

Bounded, as anything a tool leaves in a training process must be:

- in size: copies of at most ``MAX_BYTES`` in all (``RANKDEBUG_KEEP_MB`` sets it). A larger
  value is kept uncopied where it cannot change (the rank is stopped: held at an exception,
  or paused under the debugger), else not at all: the compare then says it could not narrow
  the difference down, and why;
- in time: a copy goes ``KEEP_S`` after it was made, even if nobody asks again (a compare
  whose client died);
- by count: ``MAX_KEPT`` at most, the oldest goes first;
- and ``release`` drops one as soon as its compare is done.

Pure Python, 3.9 and later.
"""

from __future__ import annotations

import os
import sys
import threading
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

MAX_KEPT = 4
KEEP_S = 60.0
DEFAULT_MB = 256
MAX_KEY = 200


def max_bytes() -> int:
    text = os.environ.get("RANKDEBUG_KEEP_MB", "").strip()
    if text.isascii() and text.isdigit() and len(text) <= 7:
        return int(text) << 20
    return DEFAULT_MB << 20


class _Kept:
    """A value kept (``elements``; copied or not), or only why it was not (``why``)."""

    def __init__(self, elements: Any, size: int = 0, why: str = "") -> None:
        self.at = time.monotonic()
        self.elements = elements
        self.size = size  # bytes of the copy (0: none)
        self.why = why


_kept: dict[str, _Kept] = {}
_lock = threading.Lock()
_pruner: list[threading.Thread] = []  # the thread that drops what is past its time
_wake = threading.Event()  # something was kept or dropped: the pruner looks again


def valid_key(key: object) -> bool:
    return isinstance(key, str) and 0 < len(key) <= MAX_KEY


def keep(key: object, elements: Any, stopped: Callable[[], bool],
         spawn: Callable[..., threading.Thread]) -> None:
    """Keep ``elements`` (``summary``'s view of a value) under ``key``: a copy within the
    bounds, else uncopied when ``stopped()``, else only why not."""
    if not isinstance(key, str) or not valid_key(key) or elements is None:
        return
    size = int(elements.n) * int(elements.itemsize)
    limit = max_bytes()
    with _lock:
        _prune(time.monotonic())
        _kept.pop(key, None)
        used = sum(k.size for k in _kept.values())
        while _kept and (len(_kept) >= MAX_KEPT or (size <= limit and used + size > limit)):
            used -= _kept.pop(next(iter(_kept))).size  # the oldest first
        if size <= limit:
            elements.snapshot()
            _kept[key] = _Kept(elements, size)
        elif stopped():
            _kept[key] = _Kept(elements)
        else:
            _kept[key] = _Kept(None, why=(
                f"the value ({size / (1 << 20):.0f} MiB) is larger than the "
                f"{limit / (1 << 20):.0f} MiB a running rank keeps a copy of "
                "(RANKDEBUG_KEEP_MB sets that)"))
        if not _pruner:
            _pruner.append(spawn("rankdebug-handler-kept", _prune_until_empty))
    _wake.set()


def get(key: object) -> Any:
    """The kept elements; LookupError saying why there are none."""
    with _lock:
        _prune(time.monotonic())
        found = _kept.get(key) if isinstance(key, str) else None
    if found is not None and found.elements is not None:
        return found.elements
    raise LookupError(found.why if found is not None else (
        f"no value kept under that key (evaluate first; a value is kept {KEEP_S:g} s)"))


def release(key: object) -> bool:
    """Drop what ``key`` kept; whether there was something."""
    with _lock:
        found = isinstance(key, str) and _kept.pop(key, None) is not None
    _wake.set()
    return found


def held_bytes() -> int:
    """Bytes of the copies kept now."""
    with _lock:
        return sum(k.size for k in _kept.values())


def count() -> int:
    with _lock:
        return len(_kept)


def _prune(now: float) -> None:
    for key in [k for k, v in _kept.items() if now - v.at > KEEP_S]:
        del _kept[key]


def _prune_until_empty() -> None:
    """Drop what is past its time; end when nothing is kept."""
    while True:
        with _lock:
            now = time.monotonic()
            _prune(now)
            if not _kept:
                _pruner.clear()
                return
            wake = min(v.at for v in _kept.values()) + KEEP_S
            _wake.clear()
        _wake.wait(max(0.05, wake - now + 0.01))


def stopped_main() -> bool:
    """Whether the main thread is stopped, so its values cannot change: held at an
    exception, or suspended by the debugger."""
    hold = sys.modules.get("rankdebug.runtime.hold")
    if hold is not None and hold.held():
        return True
    main = threading.main_thread().ident
    frame = sys._current_frames().get(main or 0)
    while frame is not None:
        if frame.f_code.co_name == "_do_wait_suspend":
            return True
        frame = frame.f_back
    return False

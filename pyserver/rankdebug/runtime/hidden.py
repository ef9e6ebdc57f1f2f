"""The files pydevd never traces in a chosen rank: rankdebug's own (this package, and the
bootstrap, which runs as the boot folder's ``sitecustomize``) and, as debugpy does,
debugpy's. No breakpoint, step or pause stops in them, and no stack a client reads shows
them.

pydevd takes them as ``dont_trace_start_patterns``, but sets those only once its
connection to the adapter is up. A pause passed on at once (the gate replays the client's
configuration, then the job's own pause) could be taken before that, and trace our frames
for good. So they are set as the socket connects (``debug._connect_at_once``), and kept
whenever pydevd's patterns are set again (``debugpy.listen`` sets debugpy's alone).

Pure Python, 3.9 and later.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_RUNTIME = os.path.dirname(os.path.abspath(__file__))


def _bootstrap() -> str | None:
    """The bootstrap's file: ``sitecustomize.py`` of the boot folder this package is linked
    into; else the running ``sitecustomize`` if it is the bootstrap (once it is done, the
    one it shadows takes the name)."""
    beside = os.path.join(os.path.dirname(os.path.dirname(_RUNTIME)), "sitecustomize.py")
    boot = sys.modules.get("sitecustomize")
    path = getattr(boot, "__file__", None)
    if isinstance(path, str) and callable(getattr(boot, "chain_sitecustomize", None)):
        return os.path.abspath(path)
    return beside if os.path.isfile(beside) else None


_BOOT = _bootstrap()


def _spellings(path: str) -> list[str]:
    # pydevd reads paths unresolved (unless the client asks it to resolve symlinks), and
    # the boot folder links the package in: both spellings.
    return [path, os.path.realpath(path)]


def ours() -> tuple[str, ...]:
    """rankdebug's files in this process: path prefixes."""
    found = _spellings(_RUNTIME)
    if _BOOT is not None:
        found += _spellings(_BOOT)
    return tuple(dict.fromkeys(found))


def patterns() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``dont_trace_start_patterns`` and ``dont_trace_end_patterns`` for pydevd."""
    import debugpy
    from debugpy.common.util import hide_debugpy_internals

    start = list(ours())
    end: tuple[str, ...] = ()
    if hide_debugpy_internals():  # type: ignore[no-untyped-call]
        start += _spellings(os.path.dirname(os.path.abspath(debugpy.__file__)))
        end = ("debugpy_launcher.py",)
    return tuple(dict.fromkeys(start)), end


def keep() -> None:
    """Every later setting of pydevd's patterns keeps ours."""
    from _pydevd_bundle.pydevd_api import PyDevdAPI

    setter = PyDevdAPI.set_dont_trace_start_end_patterns
    if getattr(setter, "rankdebug", False):
        return

    def set_patterns(self: Any, py_db: Any, start: Any, end: Any) -> Any:
        return setter(self, py_db, tuple(dict.fromkeys((*ours(), *start))), tuple(end))

    set_patterns.rankdebug = True  # type: ignore[attr-defined]
    PyDevdAPI.set_dont_trace_start_end_patterns = set_patterns


def apply() -> None:
    """Set the patterns on the debugger being set up, before it reads a message."""
    import pydevd
    from _pydevd_bundle.pydevd_api import PyDevdAPI

    py_db = pydevd.get_global_debugger()
    if py_db is not None:
        start, end = patterns()
        PyDevdAPI().set_dont_trace_start_end_patterns(py_db, start, end)

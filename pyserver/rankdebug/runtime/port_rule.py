"""A chosen rank's debug port: the one rule every layer uses, and the one fallback.

The supervisor reserves the ports (``supervise/ports.choose``: from the base port, the
chosen ranks in order, a port each, skipping ports in use) and tells each rank its own
(``RANKDEBUG_PORTS``); the generated launch.json numbers its debugpy configurations the
same way. A rank with no reserved port takes any free one: its ``listening`` line says
which. Stdlib only: ranks import it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def port_of(base: int, place: int) -> int:
    """The port the chosen rank at ``place`` (0 for the lowest chosen rank) is first
    offered from ``base``; 0 (any free port) when there is no base."""
    return base + place if base > 0 and base + place <= 65535 else 0


def on_port_or_any(port: int, start: Callable[[int], T],
                   errors: tuple[type[BaseException], ...] = (OSError,)) -> T:
    """``start(port)``; when the reserved ``port`` was taken meanwhile, ``start(0)``: any
    free port (the listener says which it got)."""
    try:
        return start(port)
    except errors:
        if port == 0:
            raise
        return start(0)

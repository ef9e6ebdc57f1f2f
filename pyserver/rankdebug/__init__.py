"""Rank Debugger: debug chosen ranks of distributed PyTorch training."""

from __future__ import annotations

__version__ = "0.1.0"

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import FrameType


def breakpoint(
    ranks: int | str | list[int] | tuple[int, ...] | None = 0,
    others: str = "wait",
    *,
    frame: FrameType | None = None,
) -> None:
    """Stop ``ranks`` in the debugger here; the other ranks wait (``others="wait"``) or run on
    (``"run"``) until the chosen ranks continue. See ``rankdebug.runtime.breakpoint``."""
    import sys

    from rankdebug.runtime.breakpoint import breakpoint as _breakpoint

    _breakpoint(ranks, others, frame=frame or sys._getframe(1))

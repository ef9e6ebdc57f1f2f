"""What the terminal debugger knows of each chosen rank, shared by ``session`` (which holds
the ranks), ``group`` (group commands), ``breaks`` (breakpoints) and ``reading`` (the
stopped ranks' stacks and values)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rankdebug.repl import render
from rankdebug.repl.link import Link

Say = Callable[[str], None]


class SessionError(ValueError):
    """A command that cannot be done now; its message is the one line to show."""


@dataclass
class RankView:
    """What the debugger knows of one chosen rank."""

    rank: int
    link: Link | None = None
    state: str = "connecting"  # waiting (to be started: c) running stopped exited gone refused
    why: str | None = None  # refused or gone: why
    reason: str | None = None  # the stop's reason (breakpoint, step, pause, exception)
    thread: int | None = None
    where: render.Where | None = None
    waiting_in: str | None = None  # shown paused while it waits in a collective
    blocked: str | None = None  # running, blocked in this collective (a group step found)
    stops: int = 0
    local_rank: int | None = None

    @property
    def live(self) -> bool:
        """Connected to a rank that has not ended nor turned us away."""
        return self.link is not None and self.state not in ("gone", "exited", "refused")

"""What a client session needs of its gate (``gate.Gate`` is the one that has it)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Protocol

Answer = Callable[[dict[str, Any]], None]  # who wants the response to the gate's own request


class GateSide(Protocol):
    """What a session needs of its gate."""

    rank: int
    local_rank: int | None
    lock: threading.RLock
    adapter: tuple[str, int] | None
    idle: threading.Event  # set while no session talks to the adapter
    cli_breaks: dict[str, set[int]]
    held: bool  # paused by the job (stop together) while untraced

    def notify(self, what: str, info: dict[str, Any] | None = None) -> None: ...

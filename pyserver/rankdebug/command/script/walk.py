"""What the walker's parts share: a statement's exit status, and the walker as they
call back into it (a Protocol, so that none of them imports the class that calls them)."""

from __future__ import annotations

from typing import Protocol

from tree_sitter import Node

from rankdebug.command.plan import Diagnostic
from rankdebug.command.state import State
from rankdebug.command.syntax import Positions

Status = bool | None  # exit status known to be success/failure, or unknown


class Walk(Protocol):
    """The walker, as control flow and the builtins run statements through it."""

    diagnostics: list[Diagnostic]

    def block(self, nodes: list[Node], seg: int, state: State) -> State: ...

    def stmt(self, node: Node, seg: int, state: State,
             background: bool = False) -> tuple[State, Status]: ...

    def source(self, path: str, seg: int, state: State) -> State: ...

    def positions(self, segment: int) -> Positions: ...

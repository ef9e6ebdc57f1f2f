"""What the parts of word expansion hand each other: chunks of value, the parameter being
expanded, and the expander as the parts see it (a Protocol, so that none of them imports
the class that calls them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from tree_sitter import Node

from rankdebug.command.state import Scalar, State, unknown
from rankdebug.command.syntax import text

MAX_DEPTH = 64
BREAK = object()


class TooDeep(Exception):
    """Nesting beyond MAX_DEPTH: the caller turns it into a CommandError."""


@dataclass
class Chunk:
    value: Scalar
    split: bool  # unquoted expansion result: subject to word splitting


Chunks = list[Chunk | object]  # Chunk, or BREAK between the words of "$@"


@dataclass(frozen=True)
class Param:
    """A parameter reference as written (``src``): its name and index, and whether it is
    inside double quotes."""

    name: str
    index: str | None
    src: str
    quoted: bool

    def chunk(self, value: Scalar) -> Chunk:
        return Chunk(value, not self.quoted)

    def unknown(self, reason: str) -> Chunk:
        return Chunk(unknown(self.src, reason), not self.quoted)


class Expansion(Protocol):
    """The expander, as parameter expansion, arithmetic, substitutions and here-documents
    call back into it."""

    state: State
    depth: int
    unset_empty: bool

    def scalar(self, node: Node) -> Scalar: ...

    def chunks(self, node: Node, quoted: bool) -> Chunks: ...

    def arith_text(self, expr: str) -> int | None: ...

    def param_items(self, name: str, index: str | None,
                    src: str) -> list[Scalar] | str | None: ...

    def stdin(self, command: Node) -> Scalar | None: ...


def leading_blanks(node: Node) -> str:
    """Blanks tree-sitter-bash puts inside an expansion's opening token when they are all
    that separates it from the expansion before it (`"$A $B"`: ` $B`): text, not syntax."""
    raw = text(node)
    return raw[: len(raw) - len(raw.lstrip(" \t\n"))] if raw[:1] in (" ", "\t", "\n") else ""


def cmd_name(node: Node) -> str:
    name = node.child_by_field_name("name")
    return text(name) if name is not None else ""

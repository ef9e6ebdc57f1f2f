"""The shell states the incremental walk keeps between edits: the edit they are moved by,
whether a state after an edit equals the kept one, and states holding no tree-sitter node
(a function's node is its text, found again in the new tree when the walk resumes)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tree_sitter import Node

from rankdebug.command.line_moves import move_var
from rankdebug.command.state import Function, State
from rankdebug.command.words import Part


@dataclass(frozen=True)
class Edit:
    """An edit of the document: the changed bytes, and the lines it added (or removed,
    negative) after ``old_end_row``."""

    start: int
    old_end: int
    new_end: int
    old_end_row: int
    delta_rows: int

    @property
    def delta_bytes(self) -> int:
        return self.new_end - self.old_end



def same_vars(state: State, before: State, edit: Edit) -> bool:
    if state.vars == before.vars:
        return True
    # Reasons quote line numbers: compare with the old ones moved like the lines.
    if state.vars.keys() != before.vars.keys() or edit.delta_rows == 0:
        return False
    return all(var == before.vars[name]
               or var == move_var(before.vars[name], ((edit.old_end_row, edit.delta_rows),))
               for name, var in state.vars.items())


def same_functions(state: State, before: State, edit: Edit) -> bool:
    """The same functions, defined by the same text at the same (moved) places."""
    if state.functions.keys() != before.functions.keys():
        return False
    for name, fn in state.functions.items():
        old_fn = before.functions[name]
        old_start = old_fn.start + (edit.delta_bytes if old_fn.start >= edit.old_end else 0)
        if fn.start != old_start or _fn_text(fn) != _fn_text(old_fn):
            return False
    return True



@dataclass(frozen=True, slots=True)
class _Detached:
    """In place of a function's node in a kept state: the definition's text. A Node would
    keep its whole tree alive, and kept states outlive many trees (one per edit)."""

    text: bytes


def _node_bytes(node: object) -> bytes | None:
    if isinstance(node, _Detached):
        return node.text
    assert isinstance(node, Node)
    return node.text


def _fn_text(fn: Function) -> str:
    return (_node_bytes(fn.node) or b"").decode("utf-8", errors="replace")


def detach(state: State, memo: dict[int, tuple[Function, Function]]) -> State:
    """A copy of ``state`` holding no tree-sitter node: every function's node (and the
    nodes of the states they were defined in) replaced by its text. ``memo`` maps
    functions already detached (by id; the original is kept there so ids stay unique)."""
    out = state.copy()
    out.functions = {name: _detach_fn(fn, memo) for name, fn in state.functions.items()}
    return out


def _detach_fn(fn: Function, memo: dict[int, tuple[Function, Function]]) -> Function:
    if isinstance(fn.node, _Detached) and not fn.defined_state.functions:
        return fn
    hit = memo.get(id(fn))
    if hit is not None:
        return hit[1]
    node = fn.node if isinstance(fn.node, _Detached) else _Detached(_node_bytes(fn.node) or b"")
    out = Function(fn.name, node, fn.segment, detach(fn.defined_state, memo), fn.start, fn.end)
    memo[id(fn)] = (fn, out)
    return out


class Stale(Exception):
    """A kept state names a function that cannot be found as it was: walk it all."""


def relocate_functions(state: State, root: Node,
                        memo: dict[int, tuple[Function, Function]]) -> State:
    """The state with its functions' nodes taken from the new tree: the definition must be
    where the function says it is now, with the same text. The states they were defined
    in are detached (they would otherwise hold the trees of older walks)."""
    moved = state.copy()
    for name, fn in state.functions.items():
        found = _function_at(root, fn.start, fn.end)
        if found is None or found.text != _node_bytes(fn.node):
            raise Stale(name)
        moved.functions[name] = Function(name, found, fn.segment,
                                         detach(fn.defined_state, memo), fn.start, fn.end)
    return moved


def _function_at(root: Node, start: int, end: int) -> Node | None:
    found = root.descendant_for_byte_range(start, end)
    while found is not None and not (found.type == "function_definition"
                                     and found.start_byte == start and found.end_byte == end):
        found = found.parent
    return found



def move_state(state: State, edits: Sequence[Edit]) -> State:
    """A copy of a state from before some edits, as after them: line numbers its reasons
    quote, and where its functions are defined (both only when after an edit)."""
    edits = [e for e in edits if e.delta_rows or e.delta_bytes]
    if not edits:
        return state
    out = state.copy()
    moves = tuple((e.old_end_row, e.delta_rows) for e in edits if e.delta_rows)
    if moves:
        for name, var in state.vars.items():
            if var.array_unknown or not _known(var.value) or (
                    var.items is not None and not all(_known(i) for i in var.items)):
                out.vars[name] = move_var(var, moves)
    for name, fn in state.functions.items():
        start, end = fn.start, fn.end
        for e in edits:
            if start >= e.old_end:
                start += e.delta_bytes
                end += e.delta_bytes
        out.functions[name] = Function(fn.name, fn.node, fn.segment,
                                       move_state(fn.defined_state, edits), start, end)
    return out


def _known(parts: tuple[Part, ...]) -> bool:
    return all(part.known for part in parts)



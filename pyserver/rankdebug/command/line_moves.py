"""Plans, diagnostics and values moved by whole lines after an edit above them: their
spans, and the line numbers their reasons quote. A plan's span moves at once and its words
when they are first read (:class:`_Moved`): a line added at the top of a script with
hundreds of commands moves them all, and most are then only asked where they start."""

from __future__ import annotations

import copy
import dataclasses
import re
from typing import Any

from rankdebug.command.plan import Diagnostic, Entry, LaunchPlan, OptionUse
from rankdebug.command.state import Var
from rankdebug.command.words import Part, Span, Word

_LINE_REF = re.compile(r"\bline (\d+)")
# Line moves, oldest first: (from_row, rows) moves every position at or after from_row
# (0-based, as the text was then) by rows lines.
Moves = tuple[tuple[int, int], ...]


def _move_row(row: int, moves: Moves) -> int:
    for from_row, rows in moves:
        if row >= from_row:
            row += rows
    return row


def _move_text(message: str, moves: Moves) -> str:
    """Line numbers quoted in a message (1-based) moved like the lines they name."""
    if "line " not in message:
        return message
    return _LINE_REF.sub(lambda m: f"line {_move_row(int(m.group(1)) - 1, moves) + 1}",
                         message)


def _move_span(span: Span, moves: Moves) -> Span:
    """The span moved as its start is (its end goes along)."""
    start, end = span.start_line, span.end_line
    for from_row, rows in moves:
        if start >= from_row:
            start += rows
            end += rows
    if start == span.start_line and end == span.end_line:
        return span
    return Span(start, span.start_col, end, span.end_col)


def _move_parts(parts: tuple[Part, ...], moves: Moves) -> tuple[Part, ...]:
    for part in parts:
        if not part.known:
            return tuple(p if p.known else Part(p.text, False, _move_text(p.reason, moves))
                         for p in parts)
    return parts


def _move_word(w: Word, moves: Moves) -> Word:
    return Word(_move_parts(w.parts, moves), _move_span(w.span, moves), w.source,
                _move_text(w.reason, moves) if w.reason else w.reason)


def move_diag(d: Diagnostic, moves: Moves) -> Diagnostic:
    return Diagnostic(_move_text(d.message, moves), _move_span(d.span, moves), d.severity,
                      d.code, d.fix)


def shift_plan(plan: LaunchPlan, from_row: int, rows: int) -> LaunchPlan:
    """The plan with every position at or after `from_row` moved by `rows` lines: its
    span now, the rest when first read (a :class:`_Moved`)."""
    if rows == 0:
        return plan
    move = (from_row, rows)
    if isinstance(plan, _Moved) and plan._origin is not None:
        if len(plan._moves) < MAX_MOVES:
            return _Moved.make(plan._origin, (*plan._moves, move), plan.span)
        plan._materialize()  # (and it forgets its origin: no chain of plans builds up)
    return _Moved.make(plan, (move,), plan.span)


def _move_plan_now(plan: LaunchPlan, moves: Moves) -> LaunchPlan:
    """A copy of a plan with its positions moved. (Words that appear in several fields,
    such as an option's value in argv, are moved once.)"""
    moved: dict[int, Word] = {}

    def w(word: Word) -> Word:
        got = moved.get(id(word))
        if got is None:
            got = moved[id(word)] = _move_word(word, moves)
        return got

    out = copy.copy(plan)
    out.span = _move_span(plan.span, moves)
    out.argv = [w(x) for x in plan.argv]
    out.entry_args = [w(x) for x in plan.entry_args]
    out.env = {k: w(v) for k, v in plan.env.items()}
    out.script_env = {k: w(v) for k, v in plan.script_env.items()}
    if plan.entry is not None:
        out.entry = Entry(plan.entry.kind, w(plan.entry.target))
    out.master_addr = w(plan.master_addr) if plan.master_addr is not None else None
    out.master_port = w(plan.master_port) if plan.master_port is not None else None
    out.options = [OptionUse(o.name, o.flag, w(o.value) if o.value is not None else None,
                             _move_span(o.span, moves)) for o in plan.options]
    out.diagnostics = [move_diag(d, moves) for d in plan.diagnostics]
    return out


# A plan moved more often than this since its words were last read is moved for real.
MAX_MOVES = 64
# What no line move changes, taken from the plan as walked; and what holds positions,
# moved when first read (with `span`, moved at once, that is every field of a plan).
_SAME = ("launcher", "nnodes", "node_rank", "nproc_per_node", "world_size", "entry_index",
         "visible_devices", "nnodes_range", "in_launcher", "hosts", "cwd", "followed",
         "background")
_LAZY = ("argv", "entry", "entry_args", "env", "script_env", "master_addr", "master_port",
         "options", "diagnostics")
assert {f.name for f in dataclasses.fields(LaunchPlan)} == {*_SAME, *_LAZY, "span"}


class _Moved(LaunchPlan):
    """A plan moved by whole lines since it was walked: ``_origin`` as walked, then
    ``_moves``. Its span is moved when it is made; the fields in ``_LAZY`` are unset slots
    until one of them is read, then all are moved at once (``__getattr__``) and the origin
    is let go. It reads, compares and copies like the plan :func:`_move_plan_now` makes."""

    __slots__ = ("_moves", "_origin")
    _origin: LaunchPlan | None
    _moves: Moves

    @classmethod
    def make(cls, origin: LaunchPlan, moves: Moves, span: Span) -> _Moved:
        """``span``: the plan's span before the last of ``moves``."""
        out = cls.__new__(cls)
        for name in _SAME:
            setattr(out, name, getattr(origin, name))
        out.span = _move_span(span, moves[-1:])
        out._origin, out._moves = origin, moves
        return out

    def __getattr__(self, name: str) -> Any:
        # Only for slots not set: the moved fields before their first read, or the
        # bookkeeping of a plan made whole by __init__ (dataclasses.replace, copies).
        walked = object.__getattribute__(self, "_origin") if name in _LAZY else None
        if walked is not None:
            if name == "diagnostics":  # alone: the checks read them for every plan
                self.diagnostics = [move_diag(d, self._moves) for d in walked.diagnostics]
            else:
                self._materialize()
            return object.__getattribute__(self, name)
        if name == "_origin":
            return None
        if name == "_moves":
            return ()
        raise AttributeError(name)

    def _materialize(self) -> None:
        if self._origin is None:
            return
        whole = _move_plan_now(self._origin, self._moves)
        for name in _LAZY:
            if name != "diagnostics" or not _is_set(self, name):
                setattr(self, name, getattr(whole, name))
        self._origin, self._moves = None, ()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LaunchPlan):
            return NotImplemented
        return all(getattr(self, f.name) == getattr(other, f.name)
                   for f in dataclasses.fields(LaunchPlan))

    __hash__ = None  # type: ignore[assignment]  # (as LaunchPlan: mutable, compared by value)


def _is_set(obj: object, slot: str) -> bool:
    try:
        object.__getattribute__(obj, slot)
    except AttributeError:
        return False
    return True


def origin(plan: LaunchPlan) -> LaunchPlan:
    """The plan as walked, when edits since have only moved it by whole lines: every value
    the same, words maybe on other lines. Reading it does not move the plan's words."""
    if isinstance(plan, _Moved):
        found = plan._origin
        if found is not None:
            return found
    return plan




def move_var(var: Var, moves: Moves) -> Var:
    items = None if var.items is None else tuple(_move_parts(i, moves) for i in var.items)
    return Var(_move_parts(var.value, moves), items, var.exported, var.integer,
               _move_text(var.array_unknown, moves))

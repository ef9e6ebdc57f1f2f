"""Every launch command of a document, re-evaluated after an edit only as far as it reaches.

The language server asks for all plans of a document on every keystroke. A full
walk of a 2,000-line script costs a few hundred milliseconds; an edit usually
changes one statement. So the last walk is kept: the tree (re-parsed
incrementally), each top-level statement's plans, and the shell state before
every CHECKPOINT-th statement. After an edit the walk resumes at the last
checkpoint before it, and stops as soon as, past the edit, the state equals the
old state at the same statement: everything after is then what it was, moved
by the lines the edit added or removed. Moving a plan moves its span at once and its
words when they are first read (:class:`_Moved`): a line added at the top of a script
with hundreds of commands moves them all, and most are then only asked where they start.
"""

from __future__ import annotations

import bisect
import copy
import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tree_sitter import Node, Point, Tree

from rankdebug.command.expand.chunks import TooDeep
from rankdebug.command.plan import Diagnostic, Entry, LaunchPlan, OptionUse
from rankdebug.command.planner import (
    Options,
    Where,
    _base_state,
    document_slip,
    plan_all_commands,
    plan_launch,
)
from rankdebug.command.script.walker import Report, Walker
from rankdebug.command.source import Segment, load
from rankdebug.command.state import Function, State, Var
from rankdebug.command.syntax import parse_incremental
from rankdebug.command.words import Part, Span, Word

if TYPE_CHECKING:
    from typing import Unpack  # Python 3.11; the annotations are not evaluated at run time

CHECKPOINT = 8


@dataclass
class _Record:
    """One top-level statement of the last walk."""

    index: int  # in root.children
    start: int  # bytes
    end: int
    before: State | None  # the state before it, at checkpoints
    plans: list[LaunchPlan] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    called: list[str] = field(default_factory=list)  # functions first called here
    # Edits not yet applied to `before` (line numbers in reasons, function positions):
    # applied when it is used.
    pending: list[_Edit] = field(default_factory=list)

    def state(self) -> State | None:
        if self.before is not None and self.pending:
            self.before = _move_state(self.before, self.pending)
            self.pending = []
        return self.before


class DocumentPlans:
    """`plan_all` for one open document, kept up to date edit by edit."""

    def __init__(self, **where: Unpack[Where]) -> None:
        self.opts = Options(**where)
        self._bytes: bytes | None = None
        self._tree: Tree | None = None
        self._records: list[_Record] = []
        self._final: State | None = None
        self._sbatch_key: tuple[str, ...] = ()
        # How the last update went: "full", "incremental" or "markdown".
        self.last_mode = ""
        self.last_rewalked = 0

    def update(self, data: str | bytes) -> tuple[list[LaunchPlan], list[Diagnostic]]:
        source = load(data, path=self.opts.path, language=self.opts.language)
        if len(source.segments) != 1 or source.segments[0].first_line != 0:
            self.last_mode = "markdown"
            self._tree = None
            return plan_all_commands(source, self.opts)
        seg_text = source.segments[0].text
        new = seg_text.encode("utf-8")
        base, sbatch = _base_state(seg_text, self.opts)
        sbatch_key = tuple(w.display for w in sbatch)
        try:
            if (self._tree is None or self._bytes is None or self._final is None
                    or sbatch_key != self._sbatch_key):
                plans, diags = self._full(seg_text, new, base, sbatch)
            else:
                plans, diags = self._incremental(seg_text, new, base, sbatch)
        except (TooDeep, RecursionError):
            self._tree = None
            return [], [*source.diagnostics]
        self._sbatch_key = sbatch_key
        return plans, [*source.diagnostics, *diags]

    # ---- the two ways ------------------------------------------------------------------

    def _full(self, seg_text: str, new: bytes, base: State,
              sbatch: list[Word]) -> tuple[list[LaunchPlan], list[Diagnostic]]:
        self.last_mode = "full"
        tree = parse_incremental(new, None)
        records, final, finish_plans, _ = self._walk(seg_text, tree.root_node, base, sbatch,
                                                     _Resume(0, [], set(), None))
        self._commit(new, tree, records, final)
        return self._result(records, finish_plans)

    def _incremental(self, seg_text: str, new: bytes, base: State,
                     sbatch: list[Word]) -> tuple[list[LaunchPlan], list[Diagnostic]]:
        assert self._bytes is not None and self._tree is not None
        old = self._bytes
        if old == new and self._final is not None:
            self.last_mode = "incremental"
            self.last_rewalked = 0
            return self._result(self._records, self._finish_again(seg_text, new, sbatch))
        self.last_mode = "incremental"
        start, old_end, new_end = _diff(old, new)
        edited = self._tree.copy()
        edited.edit(start_byte=start, old_end_byte=old_end, new_end_byte=new_end,
                    start_point=_point(old, start), old_end_point=_point(old, old_end),
                    new_end_point=_point(new, new_end))
        tree = parse_incremental(new, edited)
        root = tree.root_node
        children = root.children
        # Statements wholly before the edit, unchanged in the new tree.
        same = 0
        count = len(children)
        for rec in self._records:
            if rec.end >= start or rec.index >= count:
                break
            child = children[rec.index]
            if child.start_byte != rec.start or child.end_byte != rec.end:
                break
            same += 1
        resume = min(same, len(self._records) - 1)  # the last checkpoint up to `same`
        while resume > 0 and self._records[resume].before is None:
            resume -= 1
        resume = max(resume, 0)
        kept = self._records[:resume]
        if not kept and not self._records:
            return self._full(seg_text, new, base, sbatch)
        state = self._records[resume].state() if resume < len(self._records) else None
        if state is None:
            return self._full(seg_text, new, base, sbatch)
        try:  # the functions it knows were defined before the edit: same bytes
            state = _relocate_functions(state, root, {})
        except _Stale:
            return self._full(seg_text, new, base, sbatch)
        called = {name for rec in kept for name in rec.called}
        edit = _Edit(start, old_end, new_end, _point(old, old_end).row,
                     _point(new, new_end).row - _point(old, old_end).row)
        # Resume in the new tree right after the last statement kept.
        kept_end = kept[-1].end if kept else -1
        start_child = kept[-1].index + 1 if kept else 0
        while start_child < len(children) and children[start_child].end_byte <= kept_end:
            start_child += 1
        try:
            records, final, finish_plans, _ = self._walk(
                seg_text, root, state.copy(), sbatch,
                _Resume(start_child, kept, called, edit, children))
        except _Stale:
            return self._full(seg_text, new, base, sbatch)
        self._commit(new, tree, records, final)
        return self._result(records, finish_plans)

    # ---- the walk ---------------------------------------------------------------------

    def _walk(self, seg_text: str, root: Node, state: State, sbatch: list[Word],
              resume: _Resume) -> tuple[list[_Record], State, list[LaunchPlan], set[str]]:
        start_child, called, old = resume.start_child, resume.called, resume.old
        records = list(resume.kept)
        current: list[_Record] = []
        seen: set[tuple[int, int]] = set()

        def on_command(rep: Report) -> None:
            key = (rep.node.start_byte, rep.node.end_byte)
            if key in seen:
                return
            seen.add(key)
            plan = plan_launch(rep, sbatch, self.opts)
            if plan is not None and current:
                current[0].plans.append(plan)
            elif plan is None and (slip := document_slip(rep)) is not None:
                walker.diagnostics.append(slip)

        walker = Walker(on_command)
        walker.prepare([Segment(seg_text, 0)], {0: root})
        walker.called.update(called)
        detached: dict[int, tuple[Function, Function]] = {}
        children = resume.children if resume.children is not None else root.children
        walked = 0
        for i in range(start_child, len(children)):
            node = children[i]
            if not node.is_named or node.type in ("comment", "heredoc_body"):
                continue
            if old is not None and node.start_byte >= old.new_end:
                k = _record_at(self._records, node.start_byte - old.delta_bytes)
                if k is not None and self._converged(state, self._records[k], node, old):
                    records.extend(self._moved(self._records[k:], i - self._records[k].index,
                                               old))
                    assert self._final is not None
                    state = _move_state(self._final, (old,))
                    break
            rec = _Record(i, node.start_byte, node.end_byte,
                          detach(state, detached) if len(records) % CHECKPOINT == 0 else None)
            current[:] = [rec]
            n_diag = len(walker.diagnostics)
            before_called = set(walker.called)
            state = walker.step(children, i, 0, state)
            rec.diagnostics = walker.diagnostics[n_diag:]
            rec.called = sorted(walker.called - before_called)
            records.append(rec)
            walked += 1
        self.last_rewalked = walked
        current[:] = []
        finish_plans: list[LaunchPlan] = []
        finish = _Collector(finish_plans, sbatch, self.opts)
        finisher = Walker(finish)
        finisher.prepare([Segment(seg_text, 0)], {0: root})
        final = _relocate_functions(state, root, detached)
        done = set(walker.called) | {name for rec in records for name in rec.called}
        finisher.finish(final.copy(), done)
        return records, final, finish_plans, done

    def _converged(self, state: State, rec: _Record, node: Node, edit: _Edit) -> bool:
        if rec.before is None or rec.end + edit.delta_bytes != node.end_byte:
            return False
        before = rec.state()
        assert before is not None
        return (state.positional == before.positional and state.cwd == before.cwd
                and _same_vars(state, before, edit) and _same_functions(state, before, edit))

    def _moved(self, records: list[_Record], dindex: int, edit: _Edit) -> list[_Record]:
        """The old records after the edit, moved in place (the old list is dropped)."""
        delta = edit.delta_bytes
        if dindex == 0 and delta == 0:
            return records
        rows, from_row = edit.delta_rows, edit.old_end_row
        moves = ((from_row, rows),)
        for rec in records:
            rec.index += dindex
            rec.start += delta
            rec.end += delta
            if rows:
                if rec.plans:
                    rec.plans = [_shift_plan(p, from_row, rows) for p in rec.plans]
                if rec.diagnostics:
                    rec.diagnostics = [_move_diag(d, moves) for d in rec.diagnostics]
            if rec.before is not None:
                rec.pending.append(edit)
        return records

    def _finish_again(self, seg_text: str, new: bytes, sbatch: list[Word]) -> list[LaunchPlan]:
        assert self._tree is not None and self._final is not None
        plans: list[LaunchPlan] = []
        finisher = Walker(_Collector(plans, sbatch, self.opts))
        finisher.prepare([Segment(seg_text, 0)], {0: self._tree.root_node})
        done = {name for rec in self._records for name in rec.called}
        finisher.finish(self._final, done)
        return plans

    def _commit(self, new: bytes, tree: Tree, records: list[_Record], final: State) -> None:
        self._bytes = new
        self._tree = tree
        self._records = records
        self._final = final

    def _result(self, records: list[_Record],
                extra: list[LaunchPlan]) -> tuple[list[LaunchPlan], list[Diagnostic]]:
        plans: list[LaunchPlan] = []
        seen: set[tuple[int, int]] = set()
        for plan in [p for rec in records for p in rec.plans] + extra:
            key = (plan.span.start_line, plan.span.start_col)
            if key not in seen:
                seen.add(key)
                plans.append(plan)
        plans.sort(key=lambda p: (p.span.start_line, p.span.start_col))
        return plans, [d for rec in records for d in rec.diagnostics]


def _same_vars(state: State, before: State, edit: _Edit) -> bool:
    if state.vars == before.vars:
        return True
    # Reasons quote line numbers: compare with the old ones moved like the lines.
    if state.vars.keys() != before.vars.keys() or edit.delta_rows == 0:
        return False
    return all(var == before.vars[name]
               or var == _move_var(before.vars[name], ((edit.old_end_row, edit.delta_rows),))
               for name, var in state.vars.items())


def _same_functions(state: State, before: State, edit: _Edit) -> bool:
    """The same functions, defined by the same text at the same (moved) places."""
    if state.functions.keys() != before.functions.keys():
        return False
    for name, fn in state.functions.items():
        old_fn = before.functions[name]
        old_start = old_fn.start + (edit.delta_bytes if old_fn.start >= edit.old_end else 0)
        if fn.start != old_start or _fn_text(fn) != _fn_text(old_fn):
            return False
    return True


def _record_at(records: list[_Record], start: int) -> int | None:
    """Which of the last walk's records starts at a byte (records are in document order)."""
    k = bisect.bisect_left(records, start, key=_start_of)
    return k if k < len(records) and records[k].start == start else None


def _start_of(rec: _Record) -> int:
    return rec.start


@dataclass
class _Resume:
    """Where a walk starts: the top-level statement, the records kept from the last walk
    (before it), the functions they called, and the edit since (None: a full walk)."""

    start_child: int
    kept: list[_Record]
    called: set[str]
    old: _Edit | None
    children: list[Node] | None = None  # root.children, when already made


@dataclass(frozen=True)
class _Edit:
    start: int
    old_end: int
    new_end: int
    old_end_row: int
    delta_rows: int

    @property
    def delta_bytes(self) -> int:
        return self.new_end - self.old_end


class _Collector:
    def __init__(self, out: list[LaunchPlan], sbatch: list[Word], opts: Options) -> None:
        self.out = out
        self.sbatch = sbatch
        self.opts = opts

    def __call__(self, rep: Report) -> None:
        plan = plan_launch(rep, self.sbatch, self.opts)
        if plan is not None:
            self.out.append(plan)


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


class _Stale(Exception):
    """A kept state names a function that cannot be found as it was: walk it all."""


def _relocate_functions(state: State, root: Node,
                        memo: dict[int, tuple[Function, Function]]) -> State:
    """The state with its functions' nodes taken from the new tree: the definition must be
    where the function says it is now, with the same text. The states they were defined
    in are detached (they would otherwise hold the trees of older walks)."""
    moved = state.copy()
    for name, fn in state.functions.items():
        found = _function_at(root, fn.start, fn.end)
        if found is None or found.text != _node_bytes(fn.node):
            raise _Stale(name)
        moved.functions[name] = Function(name, found, fn.segment,
                                         detach(fn.defined_state, memo), fn.start, fn.end)
    return moved


def _function_at(root: Node, start: int, end: int) -> Node | None:
    found = root.descendant_for_byte_range(start, end)
    while found is not None and not (found.type == "function_definition"
                                     and found.start_byte == start and found.end_byte == end):
        found = found.parent
    return found


def _diff(old: bytes, new: bytes) -> tuple[int, int, int]:
    """(start, old_end, new_end) of the changed byte range (binary searches: the
    comparisons run in C)."""
    n = min(len(old), len(new))
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if old[:mid] == new[:mid]:
            lo = mid
        else:
            hi = mid - 1
    start = lo
    lo, hi = 0, n - start
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if old[len(old) - mid:] == new[len(new) - mid:]:
            lo = mid
        else:
            hi = mid - 1
    return start, len(old) - lo, len(new) - lo


def _point(data: bytes, offset: int) -> Point:
    row = data.count(b"\n", 0, offset)
    col = offset - (data.rfind(b"\n", 0, offset) + 1)
    return Point(row, col)


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


def _move_diag(d: Diagnostic, moves: Moves) -> Diagnostic:
    return Diagnostic(_move_text(d.message, moves), _move_span(d.span, moves), d.severity,
                      d.code, d.fix)


def _shift_plan(plan: LaunchPlan, from_row: int, rows: int) -> LaunchPlan:
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
    out.diagnostics = [_move_diag(d, moves) for d in plan.diagnostics]
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
                self.diagnostics = [_move_diag(d, self._moves) for d in walked.diagnostics]
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


def _move_state(state: State, edits: Sequence[_Edit]) -> State:
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
                out.vars[name] = _move_var(var, moves)
    for name, fn in state.functions.items():
        start, end = fn.start, fn.end
        for e in edits:
            if start >= e.old_end:
                start += e.delta_bytes
                end += e.delta_bytes
        out.functions[name] = Function(fn.name, fn.node, fn.segment,
                                       _move_state(fn.defined_state, edits), start, end)
    return out


def _known(parts: tuple[Part, ...]) -> bool:
    return all(part.known for part in parts)


def _move_var(var: Var, moves: Moves) -> Var:
    items = None if var.items is None else tuple(_move_parts(i, moves) for i in var.items)
    return Var(_move_parts(var.value, moves), items, var.exported, var.integer,
               _move_text(var.array_unknown, moves))

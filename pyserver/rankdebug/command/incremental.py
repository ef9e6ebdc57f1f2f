"""Every launch command of a document, re-evaluated after an edit only as far as it reaches.

The language server asks for all plans of a document on every keystroke. A full
walk of a 2,000-line script costs a few hundred milliseconds; an edit usually
changes one statement. So the last walk is kept: the tree (re-parsed
incrementally), each top-level statement's plans, and the shell state before
every CHECKPOINT-th statement. After an edit the walk resumes at the last
checkpoint before it, and stops as soon as, past the edit, the state equals the
old state at the same statement: everything after is then what it was, moved
by the lines the edit added or removed (line_moves.py; the kept states: kept_state.py).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tree_sitter import Node, Point, Tree

from rankdebug.command.expand.chunks import TooDeep
from rankdebug.command.kept_state import (
    Edit,
    Stale,
    detach,
    move_state,
    relocate_functions,
    same_functions,
    same_vars,
)
from rankdebug.command.line_moves import move_diag, shift_plan
from rankdebug.command.plan import Diagnostic, LaunchPlan
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
from rankdebug.command.state import Function, State
from rankdebug.command.syntax import parse_incremental
from rankdebug.command.words import Word

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
    pending: list[Edit] = field(default_factory=list)

    def state(self) -> State | None:
        if self.before is not None and self.pending:
            self.before = move_state(self.before, self.pending)
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
            state = relocate_functions(state, root, {})
        except Stale:
            return self._full(seg_text, new, base, sbatch)
        called = {name for rec in kept for name in rec.called}
        edit = Edit(start, old_end, new_end, _point(old, old_end).row,
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
        except Stale:
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
                    state = move_state(self._final, (old,))
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
        final = relocate_functions(state, root, detached)
        done = set(walker.called) | {name for rec in records for name in rec.called}
        finisher.finish(final.copy(), done)
        return records, final, finish_plans, done

    def _converged(self, state: State, rec: _Record, node: Node, edit: Edit) -> bool:
        if rec.before is None or rec.end + edit.delta_bytes != node.end_byte:
            return False
        before = rec.state()
        assert before is not None
        return (state.positional == before.positional and state.cwd == before.cwd
                and same_vars(state, before, edit) and same_functions(state, before, edit))

    def _moved(self, records: list[_Record], dindex: int, edit: Edit) -> list[_Record]:
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
                    rec.plans = [shift_plan(p, from_row, rows) for p in rec.plans]
                if rec.diagnostics:
                    rec.diagnostics = [move_diag(d, moves) for d in rec.diagnostics]
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
    old: Edit | None
    children: list[Node] | None = None  # root.children, when already made



class _Collector:
    def __init__(self, out: list[LaunchPlan], sbatch: list[Word], opts: Options) -> None:
        self.out = out
        self.sbatch = sbatch
        self.opts = opts

    def __call__(self, rep: Report) -> None:
        plan = plan_launch(rep, self.sbatch, self.opts)
        if plan is not None:
            self.out.append(plan)



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

"""Walking a script in order, as bash would run it, without running any command.

Assignments, `export`/`declare`/`local`, `unset`, `cd`, `source`, function
calls, `if`/`case` (decided when their conditions are known), loops and
`&&`/`||` update the state; each simple command met on the way is reported,
with the state at that moment, to a callback.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from tree_sitter import Node

from rankdebug.command.expand.arith import Arith
from rankdebug.command.expand.chunks import TooDeep
from rankdebug.command.expand.expander import Expander
from rankdebug.command.plan import Diagnostic
from rankdebug.command.read import DEFAULT_IFS, read_vars
from rankdebug.command.source import Segment
from rankdebug.command.state import (
    EMPTY,
    Function,
    Scalar,
    State,
    Var,
    known,
    merge,
    text_of,
    unknown,
)
from rankdebug.command.syntax import (
    Positions,
    binary_parts,
    broken_text,
    parse,
    readable_prefix,
    text,
)
from rankdebug.command.words import Span, Word

MAX_CALL_DEPTH = 12
# Lines of a `source`d file are not lines of the document: they are numbered from here.
SOURCED_FIRST_LINE = 10_000_000
MAX_SOURCE_DEPTH = 6


@dataclass(frozen=True)
class Report:
    """A simple command reached by the walk, with the state just before it runs."""

    node: Node
    pos: Positions
    state: State
    background: bool
    segment: int


class Stop(Exception):
    """Raised by a callback to end the walk early."""


Status = bool | None  # exit status known to be success/failure, or unknown


@dataclass(frozen=True)
class _Decl:
    """How `declare`, `export` or `local` (or nothing) qualifies an assignment."""

    exported: bool = False
    integer: bool = False
    local: bool = False


_PLAIN = _Decl()
_Target = tuple[str, str | None]  # NAME or NAME[INDEX]


def _target(name_node: Node) -> _Target | None:
    if name_node.type != "subscript":
        return text(name_node), None
    inner = name_node.child_by_field_name("name")
    idx = name_node.child_by_field_name("index")
    if inner is None:
        return None
    return text(inner), (text(idx) if idx is not None else None)


class Walker:
    def __init__(self, on_command: Callable[[Report], None]) -> None:
        self.on_command = on_command
        self.diagnostics: list[Diagnostic] = []
        self._call_depth = 0
        self._source_depth = 0
        self._called: set[str] = set()
        self._positions: dict[int, Positions] = {}
        self._trees: list[Node] = []

    # ---- entry points ------------------------------------------------------

    def run(self, segments: list[Segment], state: State,
            parsed: dict[int, Node] | None = None) -> State:
        roots = self.prepare(segments, parsed)
        for i, root in enumerate(roots):
            state = self.block(root.children, i, state)
        self.finish(state)
        return state

    def prepare(self, segments: list[Segment], parsed: dict[int, Node] | None = None) -> list[Node]:
        roots = []
        for i, seg in enumerate(segments):
            root = parsed[i] if parsed and i in parsed else parse(seg.text).root_node
            self._positions[i] = Positions(seg.text, seg.first_line)
            roots.append(root)
        self._trees = roots
        return roots

    def finish(self, state: State, called: set[str] | None = None) -> None:
        """Functions that are never called: their commands still deserve a plan, read
        with the state where they were defined and unknown arguments."""
        done = self._called if called is None else called
        for fn in list(state.functions.values()):
            if fn.name not in done:
                done.add(fn.name)
                st = fn.defined_state.copy()
                st.functions = dict(state.functions)
                st.positional = None
                body = fn.node.child_by_field_name("body")  # type: ignore[attr-defined]
                if body is not None:
                    self.stmt(body, fn.segment, st)

    @property
    def called(self) -> set[str]:
        return self._called

    def tree(self, segment: int) -> Node:
        return self._trees[segment]

    def positions(self, segment: int) -> Positions:
        return self._positions[segment]

    # ---- statements ----------------------------------------------------------

    def block(self, nodes: list[Node], seg: int, state: State) -> State:
        for i in range(len(nodes)):
            state = self.step(nodes, i, seg, state)
        return state

    def step(self, nodes: list[Node], i: int, seg: int, state: State) -> State:
        """Run the statement nodes[i] (a sibling `&` after it puts it in the background)."""
        node = nodes[i]
        if not node.is_named or node.type in ("comment", "heredoc_body"):
            return state
        background = i + 1 < len(nodes) and nodes[i + 1].type == "&"
        state, _ = self.stmt(node, seg, state, background)
        return state

    def stmt(self, node: Node, seg: int, state: State,
             background: bool = False) -> tuple[State, Status]:
        run = _STATEMENTS.get(node.type)
        try:
            return run(self, node, seg, state, background) if run else (state, None)
        except TooDeep:
            raise
        except RecursionError as exc:
            raise TooDeep from exc

    def _assignments(self, node: Node, seg: int, state: State,
                     background: bool) -> tuple[State, Status]:
        """`A=1` and `A=1 B=2` on their own."""
        for c in [node] if node.type == "variable_assignment" else node.named_children:
            self.assign(c, seg, state)
        return state, True

    def _declaration(self, node: Node, seg: int, state: State,
                     background: bool) -> tuple[State, Status]:
        if node.type == "unset_command":
            self.unset(node, seg, state)
        else:
            self.declare(node, seg, state)
        return state, True

    def _redirected(self, node: Node, seg: int, state: State,
                    background: bool) -> tuple[State, Status]:
        body = node.child_by_field_name("body")
        return self.stmt(body, seg, state, background) if body is not None else (state, None)

    def _pipeline(self, node: Node, seg: int, state: State,
                  background: bool) -> tuple[State, Status]:
        status: Status = None
        for c in node.named_children:
            _, status = self.stmt(c, seg, state.copy(), background=True)
        return state, status

    def _subshell(self, node: Node, seg: int, state: State,
                  background: bool) -> tuple[State, Status]:
        self.block(node.children, seg, state.copy())
        return state, None

    def _compound(self, node: Node, seg: int, state: State,
                  background: bool) -> tuple[State, Status]:
        """`{ ...; }`, and `(( ... ))` whose status is its value's."""
        first = node.children[0].type if node.children else ""
        if first != "((":
            return self.block(node.children, seg, state), None
        ex = Expander(state, self._positions[seg])
        value = None
        for c in node.named_children:
            value = Arith(ex).eval(c)
        return state, None if value is None else value != 0

    def _negated(self, node: Node, seg: int, state: State,
                 background: bool) -> tuple[State, Status]:
        kids = node.named_children
        if not kids:
            return state, None
        state, status = self.stmt(kids[0], seg, state, background)
        return state, None if status is None else not status

    def _test(self, node: Node, seg: int, state: State,
              background: bool) -> tuple[State, Status]:
        return state, test_status(node, _test_expander(state, self._positions[seg]))

    def _function(self, node: Node, seg: int, state: State,
                  background: bool) -> tuple[State, Status]:
        name_node = node.child_by_field_name("name")
        if name_node is not None:
            name = text(name_node)
            state.functions[name] = Function(name, node, seg, state.copy(),
                                             node.start_byte, node.end_byte)
        return state, True

    def _error(self, node: Node, seg: int, state: State,
               background: bool) -> tuple[State, Status]:
        pos = self._positions[seg]
        readable, broken = readable_prefix(node)
        kids = node.children
        for child in readable:  # what bash runs before it reaches the broken text
            state = self.step(kids, kids.index(child), seg, state)
        at = broken if broken is not None else node
        why = broken_text(at, pos)
        start = pos.span(at)
        line_end = len(pos.line_text(at.start_point.row))
        self.diagnostics.append(Diagnostic(
            f"this could not be read as shell ({why}); what it sets is unknown",
            Span(start.start_line, start.start_col, start.start_line, line_end),
            "warning", "syntax"))
        return state, None

    # ---- assignments ------------------------------------------------------------

    def assign(self, node: Node, seg: int, state: State, decl: _Decl = _PLAIN) -> None:
        pos = self._positions[seg]
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        target = _target(name_node) if name_node is not None else None
        if target is None:
            return
        ex = Expander(state, pos)
        if decl.local:
            self._remember_local(state, target[0])
        if value_node is not None and value_node.type == "array":
            _assign_array(node, state, target[0], ex, decl)
            return
        _assign_scalar(node, state, target, ex, decl)

    def _remember_local(self, state: State, name: str) -> None:
        if state.local_frames and name not in state.local_frames[-1]:
            state.local_frames[-1][name] = state.vars.get(name)

    def declare(self, node: Node, seg: int, state: State) -> None:
        keyword = node.children[0].type if node.children else ""
        flags = ""
        unexport = False
        for c in node.children[1:]:
            if c.type == "word" and text(c).startswith(("-", "+")):
                if text(c).startswith("+") or (text(c) == "-n" and keyword == "export"):
                    unexport = keyword == "export"
                    continue
                flags += text(c)[1:]
        exported = keyword == "export" or "x" in flags
        local = keyword == "local" or (keyword in ("declare", "typeset") and
                                       bool(state.local_frames) and "g" not in flags)
        if "f" in flags:
            return
        for c in node.named_children:
            if c.type == "variable_assignment":
                self.assign(c, seg, state, _Decl(exported, "i" in flags, local))
            elif c.type == "variable_name":
                name = text(c)
                if local:
                    self._remember_local(state, name)
                old = state.lookup(name)
                if unexport and old is not None:
                    state.vars[name] = replace(old, exported=False)
                elif old is not None:
                    state.vars[name] = replace(old, exported=old.exported or exported,
                                               integer=old.integer or "i" in flags)
                elif "a" in flags or "A" in flags:
                    state.set(name, Var(EMPTY, (), exported))
                elif exported:
                    # `export X` of an unset variable: still unset, but marked.
                    state.vars[name] = Var(EMPTY, None, True, array_unknown="__unset__")

    def unset(self, node: Node, seg: int, state: State) -> None:
        functions = any(c.type == "word" and text(c) == "-f" for c in node.children)
        for c in node.named_children:
            if c.type in ("variable_name", "word") and not text(c).startswith("-"):
                if functions:
                    state.functions.pop(text(c), None)
                else:
                    state.unset(text(c))

    # ---- commands ------------------------------------------------------------------

    def command(self, node: Node, seg: int, state: State,
                background: bool) -> tuple[State, Status]:
        pos = self._positions[seg]
        self.on_command(Report(node, pos, state, background, seg))
        name_node = node.child_by_field_name("name")
        if name_node is None:
            return state, True
        ex = Expander(state, pos)
        arg_nodes = node.children_by_field_name("argument")
        lead: list[Word] = []
        if name_node.child_count == 1 and name_node.children[0].type == "word":
            name = text_of(ex.scalar(name_node))
        else:
            # `$CMD args`: the name's expansion splits; its first word is the command.
            lead = ex.fields(name_node)
            if not lead:  # `$EMPTY cmd`: the first argument is the command
                lead, arg_nodes = ex.words(arg_nodes[:1]), arg_nodes[1:]
            if not lead:
                return state, True
            name, lead = lead[0].value, lead[1:]
        if name is None:
            return state, None
        if name in state.functions:
            args = [*lead, *ex.words(arg_nodes)]
            return self.call(state.functions[name], node, seg, state, args), None
        builtin = _BUILTINS.get(name)
        if builtin is None:
            return state, None
        args = [*lead, *ex.words(arg_nodes)]
        return builtin(self, _Run(name, node, seg, state, args, ex))

    def call(self, fn: Function, node: Node, seg: int, state: State,
             args: list[Word] | None = None) -> State:
        if self._call_depth >= MAX_CALL_DEPTH:
            return state
        self._called.add(fn.name)
        if args is None:
            ex = Expander(state, self._positions[seg])
            args = ex.words(node.children_by_field_name("argument"))
        saved_positional = state.positional
        state.positional = [w.parts for w in args]
        state.local_frames.append({})
        self._call_depth += 1
        try:
            body = fn.node.child_by_field_name("body")  # type: ignore[attr-defined]
            if body is not None:
                state, _ = self.stmt(body, fn.segment, state)
        finally:
            self._call_depth -= 1
            frame = state.local_frames.pop() if state.local_frames else {}
            for name, old in frame.items():
                if old is None:
                    state.vars.pop(name, None)
                else:
                    state.vars[name] = old
            state.positional = saved_positional
        return state

    def source(self, path: str, seg: int, state: State) -> State:
        if self._source_depth >= MAX_SOURCE_DEPTH:
            return state
        base = Path(state.cwd) if state.cwd else None
        p = Path(path).expanduser()
        if not p.is_absolute():
            if base is None:
                return state
            p = base / p
        try:
            if not p.is_file() or p.stat().st_size > 1 << 20:
                return state
            data = p.read_bytes()
        except OSError:
            return state
        if b"\0" in data:
            return state
        sub_text = data.decode("utf-8", errors="replace").replace("\r\n", "\n")
        root = parse(sub_text).root_node
        key = len(self._trees)
        self._trees.append(root)
        # Lines of a sourced file are not lines of this document: park them far away.
        self._positions[key] = Positions(sub_text, SOURCED_FIRST_LINE + key)
        self._source_depth += 1
        try:
            return self.block(root.children, key, state)
        finally:
            self._source_depth -= 1

    # ---- control flow ----------------------------------------------------------

    def condition(self, nodes: list[Node], seg: int, state: State) -> tuple[State, Status]:
        status: Status = None
        for c in nodes:
            if c.is_named and c.type != "comment":
                state, status = self.stmt(c, seg, state)
        return state, status

    def if_statement(self, node: Node, seg: int, state: State) -> tuple[State, Status]:
        clauses, else_body = _if_clauses(node)
        line = self._positions[seg].line_of(node) + 1
        why = f"depends on which branch of the if at line {line} runs"
        outcomes: list[State] = []
        cur = state
        for cond_nodes, body_nodes in clauses:
            cur, status = self.condition(cond_nodes, seg, cur)
            if status is True:
                result = self.block(body_nodes, seg, cur.copy())
                # Branches that cannot run are still walked, so their commands get plans.
                self._walk_dead(clauses, cond_nodes, else_body, seg, cur)
                return (merge([result, *outcomes], why) if outcomes else result), None
            if status is None:
                outcomes.append(self.block(body_nodes, seg, cur.copy()))
            else:
                self.block(body_nodes, seg, cur.copy())  # dead branch
        if else_body is not None:
            outcomes.append(self.block(else_body, seg, cur.copy()))
        else:
            outcomes.append(cur)
        if len(outcomes) == 1:
            return outcomes[0], None
        return merge(outcomes, why), None

    def _walk_dead(self, clauses: list[tuple[list[Node], list[Node]]], taken: list[Node],
                   else_body: list[Node] | None, seg: int, state: State) -> None:
        after = False
        for cond_nodes, body_nodes in clauses:
            if after:
                self.condition(cond_nodes, seg, state.copy())
                self.block(body_nodes, seg, state.copy())
            if cond_nodes is taken:
                after = True
        if else_body is not None:
            self.block(else_body, seg, state.copy())

    def loop(self, node: Node, seg: int, state: State) -> tuple[State, Status]:
        pos = self._positions[seg]
        line = pos.line_of(node) + 1
        why = f"changes in the loop at line {line}"
        inner = state.copy()
        values: list[str | None] = []
        var_name: str | None = None
        if node.type == "for_statement":
            var = node.child_by_field_name("variable")
            var_name = text(var) if var is not None else None
            ex = Expander(state, pos)
            values = [text_of(v) for n in node.children_by_field_name("value")
                      for v in ex.field_values(n)]
            if var_name:
                inner.set(var_name, Var(unknown("$" + var_name,
                                                f"${var_name} takes each value of the loop "
                                                f"at line {line}")))
        elif node.type == "while_statement":
            conds = node.children_by_field_name("condition")
            inner, _ = self.condition(conds, seg, inner)
        body = node.child_by_field_name("body")
        after = self.block(body.children, seg, inner) if body is not None else inner
        if node.type == "for_statement" and not values and node.children_by_field_name("value"):
            return state, None  # `for x in "$@"` with no arguments: the body never runs
        out = merge([state, after], why)
        if node.type == "for_statement" and var_name:
            if values and all(v is not None for v in values):
                out.set(var_name, Var(known(values[-1] or "")))
            else:
                out.set(var_name, Var(unknown("$" + var_name, f"${var_name} {why}")))
        return out, None

    def case(self, node: Node, seg: int, state: State) -> tuple[State, Status]:
        pos = self._positions[seg]
        ex = Expander(state, pos)
        value_node = node.child_by_field_name("value")
        word = text_of(ex.scalar(value_node)) if value_node is not None else None
        items = [c for c in node.named_children if c.type == "case_item"]
        line = pos.line_of(node) + 1
        why = f"depends on which branch of the case at line {line} runs"
        outcomes: list[State] = []
        chosen: State | None = None
        for item in items:
            patterns = [text_of(ex.scalar(p)) for p in item.children_by_field_name("value")]
            body = [c for c in item.named_children
                    if c not in item.children_by_field_name("value")]
            result = self.block(body, seg, state.copy())
            if chosen is not None:
                continue
            if word is not None and all(p is not None for p in patterns):
                if any(fnmatch.fnmatchcase(word, p) for p in patterns if p is not None):
                    chosen = result
                continue
            outcomes.append(result)
        if chosen is not None and not outcomes:
            return chosen, None
        if chosen is not None:
            outcomes.append(chosen)
        else:
            outcomes.append(state)
        return merge(outcomes, why), None

    def list_(self, node: Node, seg: int, state: State,
              background: bool) -> tuple[State, Status]:
        kids = node.children
        if len(kids) < 3:
            return self.block(kids, seg, state), None
        left, op, right = kids[0], kids[1].type, kids[2]
        state, status = self.stmt(left, seg, state)
        line = self._positions[seg].line_of(node) + 1
        why = f"depends on the result of the command at line {line}"
        runs = {"&&": status, "||": None if status is None else not status}.get(op)
        if runs is True:
            return self.stmt(right, seg, state, background)
        if runs is False:
            self.stmt(right, seg, state.copy(), background)
            return state, status
        after, _ = self.stmt(right, seg, state.copy(), background)
        return merge([after, state], why), None


def _test_expander(state: State, pos: Positions) -> Expander:
    ex = Expander(state, pos)
    ex.unset_empty = True
    return ex


# ---- statements -------------------------------------------------------------------

_Statement = Callable[[Walker, Node, int, State, bool], tuple[State, Status]]
_STATEMENTS: dict[str, _Statement] = {
    "command": Walker.command,
    "variable_assignment": Walker._assignments,
    "variable_assignments": Walker._assignments,
    "declaration_command": Walker._declaration,
    "unset_command": Walker._declaration,
    "redirected_statement": Walker._redirected,
    "if_statement": lambda w, node, seg, state, bg: w.if_statement(node, seg, state),
    **dict.fromkeys(("for_statement", "c_style_for_statement", "while_statement"),
                    lambda w, node, seg, state, bg: w.loop(node, seg, state)),
    "case_statement": lambda w, node, seg, state, bg: w.case(node, seg, state),
    "list": Walker.list_,
    "pipeline": Walker._pipeline,
    "subshell": Walker._subshell,
    "compound_statement": Walker._compound,
    "negated_command": Walker._negated,
    "test_command": Walker._test,
    "function_definition": Walker._function,
    "ERROR": Walker._error,
}


class _Clause:
    """An `if` or `elif` clause being read: its condition, then (after `then`) its body."""

    def __init__(self) -> None:
        self.cond: list[Node] = []
        self.body: list[Node] = []
        self.phase = "cond"

    def feed(self, node: Node) -> None:
        if node.type == "then":
            self.phase = "body"
        elif self.phase == "cond":
            self.cond.append(node)
        elif self.phase == "body":
            self.body.append(node)


def _if_clauses(node: Node) -> tuple[list[tuple[list[Node], list[Node]]], list[Node] | None]:
    """An if statement's (condition, body) clauses, `if` then each `elif`; its else body."""
    clauses = [_Clause()]
    else_body: list[Node] | None = None
    for c in node.children:
        if c.type == "if":
            continue
        if c.type == "fi":
            break
        if c.type == "elif_clause":
            clause = _Clause()
            for e in c.children:
                if e.type != "elif":
                    clause.feed(e)
            clause.phase = "done"
            clauses.append(clause)
        elif c.type == "else_clause":
            else_body = [e for e in c.children if e.type != "else"]
        else:
            clauses[-1].feed(c)
    return [(c.cond, c.body) for c in clauses], else_body


# ---- assignments --------------------------------------------------------------------


def _assign_array(node: Node, state: State, name: str, ex: Expander, decl: _Decl) -> None:
    """`A=(x y "$@")` and `A+=(z)`."""
    old = state.lookup(name)
    value_node = node.child_by_field_name("value")
    assert value_node is not None
    items: list[Scalar] = []
    unknown_reason = ""
    for item in value_node.named_children:
        if item.type == "comment":
            continue
        for item_value in ex.field_values(item):
            items.append(item_value)
            if (item.type in ("simple_expansion", "expansion", "command_substitution")
                    and text_of(item_value) is None):
                # Unquoted and unknown: it could be any number of words.
                unknown_reason = f"${name} holds {text(item)}, which is not known"
    if _appends(node) and old is not None and old.items is not None:
        items = list(old.items) + items
        unknown_reason = unknown_reason or old.array_unknown
    state.set(name, Var(EMPTY, tuple(items), decl.exported, decl.integer,
                        array_unknown=unknown_reason))


def _appends(node: Node) -> bool:
    return any(c.type == "+=" for c in node.children)


def _assign_scalar(node: Node, state: State, target: _Target, ex: Expander,
                   decl: _Decl) -> None:
    """`X=v`, `X+=v`, `A[i]=v`, with `declare -i` arithmetic."""
    name, index = target
    old = state.lookup(name)
    value_node = node.child_by_field_name("value")
    value: Scalar = ex.scalar(value_node) if value_node is not None else EMPTY
    is_int = decl.integer or (old is not None and old.integer)
    if is_int:
        t = text_of(value)
        n = ex.arith_text(t) if t is not None else None
        value = known(str(n)) if n is not None else unknown(text(node), "not a known number")
    if index is not None:
        _assign_index(state, target, value, ex, decl.exported)
        return
    if _appends(node) and old is not None:
        if is_int:
            a, b = text_of(old.scalar), text_of(value)
            value = (known(str(int(a) + int(b))) if a and b and a.lstrip("-").isdigit()
                     and b.lstrip("-").isdigit() else unknown(text(node), "not a number"))
        elif old.items is not None:
            state.set(name, replace(old, items=(*old.items, value)))
            return
        else:
            value = old.scalar + value
    state.set(name, Var(value, None, decl.exported, is_int))


def _assign_index(state: State, target: _Target, value: Scalar, ex: Expander,
                  exported: bool) -> None:
    """`A[i]=v`."""
    name, index = target
    assert index is not None
    old = state.lookup(name)
    items = list(old.items) if old is not None and old.items is not None else (
        [old.value] if old is not None else [])
    i = ex.arith_text(index)
    if i is None or i < 0 or i > 100_000:
        state.set(name, Var(EMPTY, (), exported, array_unknown=f"${{{name}[{index}]}}"
                                                                " has an unknown index"))
        return
    while len(items) <= i:
        items.append(EMPTY)
    items[i] = value
    state.set(name, Var(EMPTY, tuple(items), exported))


# ---- special builtins ---------------------------------------------------------------


@dataclass
class _Run:
    """A special builtin being run: its name and node, the state, its expanded words."""

    name: str
    node: Node
    seg: int
    state: State
    args: list[Word]
    ex: Expander

    @property
    def values(self) -> list[str | None]:
        return [w.value for w in self.args]


def _cd(w: Walker, run: _Run) -> tuple[State, Status]:
    state, values = run.state, run.values
    if run.name == "popd" or (values and values[0] == "-"):
        state.cwd = None
        return state, None
    home = state.lookup("HOME")
    state.chdir(values[0] if values else (text_of(home.scalar) if home else None))
    return state, None


def _source(w: Walker, run: _Run) -> tuple[State, Status]:
    values = run.values
    if values and values[0] is not None:
        return w.source(values[0], run.seg, run.state), None
    return run.state, None


def _read_builtin(w: Walker, run: _Run) -> tuple[State, Status]:
    line = w.positions(run.seg).line_of(run.node) + 1
    stdin = run.ex.stdin(run.node) if run.name != "getopts" else None
    why = f"is read at run time ({run.name} at line {line})"
    for name, var in read_vars(run.name, run.values, stdin, _ifs(run), why).items():
        run.state.set(name, var)
    return run.state, None


def _ifs(run: _Run) -> str | None:
    """The IFS a builtin splits with: its own `IFS=...` assignment, else the script's
    (None when not known)."""
    for child in run.node.children:
        name = child.child_by_field_name("name") if child.type == "variable_assignment" else None
        if name is not None and text(name) == "IFS":
            value = child.child_by_field_name("value")
            return text_of(run.ex.scalar(value)) if value is not None else ""
    var = run.state.lookup("IFS")
    return DEFAULT_IFS if var is None else text_of(var.scalar)


def _printf(w: Walker, run: _Run) -> tuple[State, Status]:
    values = run.values
    if len(values) >= 2 and values[0] == "-v" and values[1]:
        run.state.set(values[1], Var(unknown("$" + values[1], "set by printf -v")))
    return run.state, None


def _let(w: Walker, run: _Run) -> tuple[State, Status]:
    for word in run.args:
        if word.value is not None:
            run.ex.arith_text(word.value)
    return run.state, None


def _set(w: Walker, run: _Run) -> tuple[State, Status]:
    values = run.values
    if "--" in values:
        run.state.positional = [word.parts for word in run.args[values.index("--") + 1:]]
    return run.state, None


def _shift(w: Walker, run: _Run) -> tuple[State, Status]:
    state, values = run.state, run.values
    if state.positional is not None:
        n = int(values[0]) if values and values[0] and values[0].isdigit() else 1
        state.positional = state.positional[n:]
    return state, None


def _eval(w: Walker, run: _Run) -> tuple[State, Status]:
    w.diagnostics.append(Diagnostic(
        "eval runs text as code; what it sets is not known",
        w.positions(run.seg).span(run.node), "info", "eval"))
    return run.state, None


# Commands whose effects on variables, the directory or the status are followed.
_BUILTINS: dict[str, Callable[[Walker, _Run], tuple[State, Status]]] = {
    "true": lambda w, run: (run.state, True),
    ":": lambda w, run: (run.state, True),
    "false": lambda w, run: (run.state, False),
    "test": lambda w, run: (run.state, _test_words([v for v in run.values if v != "]"])),
    "[": lambda w, run: (run.state, _test_words([v for v in run.values if v != "]"])),
    "cd": _cd, "pushd": _cd, "popd": _cd,
    "source": _source, ".": _source,
    "read": _read_builtin, "mapfile": _read_builtin, "readarray": _read_builtin,
    "getopts": _read_builtin,
    "printf": _printf,
    "let": _let,
    "set": _set,
    "shift": _shift,
    "eval": _eval,
    "exit": lambda w, run: (run.state, None),
    "return": lambda w, run: (run.state, None),
}


# ---- [ ] and [[ ]] ------------------------------------------------------------------


def test_status(node: Node, ex: Expander) -> Status:
    """Whether a test command succeeds, when its operands are known."""
    kids = [c for c in node.named_children]
    if len(kids) != 1:
        return None
    return _test_expr(kids[0], ex)


def _test_expr(node: Node, ex: Expander) -> Status:
    t = node.type
    if t == "parenthesized_expression":
        kids = node.named_children
        return _test_expr(kids[0], ex) if kids else None
    if t == "unary_expression":
        return _test_unary(node, ex)
    if t == "binary_expression":
        return _test_binary(node, ex)
    value = text_of(ex.scalar(node))
    return None if value is None else value != ""


def _test_unary(node: Node, ex: Expander) -> Status:
    op_node = node.child_by_field_name("operator")
    kids = [c for c in node.named_children if c != op_node]
    op = text(op_node) if op_node is not None else (node.children[0].type
                                                     if node.children else "")
    if op == "!":
        inner = _test_expr(kids[0], ex) if kids else None
        return None if inner is None else not inner
    if not kids:
        return None
    value = text_of(ex.scalar(kids[0]))
    if value is None:
        return None
    test = _UNARY_TESTS.get(op)
    return test(value, ex) if test is not None else None  # file tests depend on the machine


_UNARY_TESTS: dict[str, Callable[[str, Expander], Status]] = {
    "-z": lambda value, ex: value == "",
    "-n": lambda value, ex: value != "",
    "-v": lambda value, ex: ex.state.lookup(value) is not None or None,
}


def _test_binary(node: Node, ex: Expander) -> Status:
    parts = binary_parts(node)
    if parts is None:
        return None
    left, op_node, right = parts
    op = text(op_node)
    if op in ("&&", "-a", "||", "-o"):
        return _test_logic(op in ("&&", "-a"), left, right, ex)
    a_val = text_of(ex.scalar(left))
    b_val = text_of(ex.scalar(right))
    if a_val is None or b_val is None:
        return None
    return _compare(op, a_val, b_val, pattern=node.parent is not None)


def _test_logic(both: bool, left: Node, right: Node, ex: Expander) -> Status:
    """`A && B` (``both``) or `A || B`, evaluated as far as needed."""
    a = _test_expr(left, ex)
    if both and a is False:
        return False
    if not both and a is True:
        return True
    b = _test_expr(right, ex)
    if a is None or b is None:
        return None
    return (a and b) if both else (a or b)


def _compare(op: str, a: str, b: str, *, pattern: bool = False) -> Status:
    if op in ("=", "=="):
        return fnmatch.fnmatchcase(a, b) if pattern and any(ch in b for ch in "*?[") else a == b
    if op == "!=":
        return a != b
    if op == "=~":
        return _regex_match(a, b)
    fn = _NUMERIC.get(op)
    if fn is None or not _INT.fullmatch(a) or not _INT.fullmatch(b):
        return None
    return bool(fn(int(a), int(b)))


def _regex_match(text_: str, regex: str) -> Status:
    try:
        return re.search(regex, text_) is not None
    except re.error:
        return None


_INT = re.compile(r"\s*-?\d+\s*")
_NUMERIC: dict[str, Callable[[int, int], bool]] = {
    "-eq": lambda x, y: x == y, "-ne": lambda x, y: x != y, "-lt": lambda x, y: x < y,
    "-le": lambda x, y: x <= y, "-gt": lambda x, y: x > y, "-ge": lambda x, y: x >= y,
}


def _test_words(args: list[str | None]) -> Status:
    """`test`/`[` with its words expanded: one word, `-z X`, `-n X`, `! X` or `A OP B`."""
    if any(a is None for a in args):
        return None
    words = [a for a in args if a is not None]
    if len(words) == 1:
        return words[0] != ""
    if len(words) == 2:
        test = _UNARY_WORDS.get(words[0])
        return test(words[1]) if test is not None else None
    if len(words) == 3:
        return _compare(words[1], words[0], words[2])
    return None


_UNARY_WORDS: dict[str, Callable[[str], bool]] = {
    "-z": lambda value: value == "",
    "-n": lambda value: value != "",
    "!": lambda value: value == "",
}

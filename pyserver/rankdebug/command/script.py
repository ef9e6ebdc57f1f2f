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

from rankdebug.command.expand import Arith, Expander, TooDeep
from rankdebug.command.plan import Diagnostic
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
from rankdebug.command.syntax import Positions, parse, text
from rankdebug.command.words import Span

MAX_CALL_DEPTH = 12
# Lines of a `source`d file are not lines of the document: they are numbered from here.
SOURCED_FIRST_LINE = 10_000_000
MAX_SOURCE_DEPTH = 6
# Commands whose effects on variables or the directory we follow.
_SPECIAL = frozenset({"cd", "pushd", "popd", "source", ".", "read", "mapfile", "readarray",
                      "eval", "set", "shift", "let", "getopts", "printf", "true", ":", "false",
                      "test", "[", "exit", "return"})


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
        t = node.type
        pos = self._positions[seg]
        try:
            if t == "command":
                return self.command(node, seg, state, background)
            if t == "variable_assignment":
                self.assign(node, seg, state, exported=False)
                return state, True
            if t == "variable_assignments":
                for c in node.named_children:
                    self.assign(c, seg, state, exported=False)
                return state, True
            if t == "declaration_command":
                self.declare(node, seg, state)
                return state, True
            if t == "unset_command":
                self.unset(node, seg, state)
                return state, True
            if t == "redirected_statement":
                body = node.child_by_field_name("body")
                if body is None:
                    return state, None
                return self.stmt(body, seg, state, background)
            if t in ("if_statement",):
                return self.if_statement(node, seg, state)
            if t in ("for_statement", "c_style_for_statement", "while_statement"):
                return self.loop(node, seg, state)
            if t == "case_statement":
                return self.case(node, seg, state)
            if t == "list":
                return self.list_(node, seg, state, background)
            if t == "pipeline":
                status: Status = None
                for c in node.named_children:
                    _, status = self.stmt(c, seg, state.copy(), background=True)
                return state, status
            if t == "subshell":
                inner = self.block(node.children, seg, state.copy())
                del inner
                return state, None
            if t == "compound_statement":
                first = node.children[0].type if node.children else ""
                if first == "((":
                    ex = Expander(state, pos, _no_note)
                    value = None
                    for c in node.named_children:
                        value = Arith(ex).eval(c)
                    return state, None if value is None else value != 0
                return self.block(node.children, seg, state), None
            if t == "negated_command":
                kids = node.named_children
                if not kids:
                    return state, None
                state, status = self.stmt(kids[0], seg, state, background)
                return state, None if status is None else not status
            if t == "test_command":
                return state, test_status(node, _test_expander(state, pos))
            if t == "function_definition":
                name_node = node.child_by_field_name("name")
                if name_node is not None:
                    name = text(name_node)
                    state.functions[name] = Function(name, node, seg, state.copy(),
                                                     node.start_byte, node.end_byte)
                return state, True
            if t == "ERROR":
                line = pos.line_of(node)
                self.diagnostics.append(Diagnostic(
                    f"line {line + 1} could not be read as shell; what it sets is unknown",
                    pos.span(node), "warning", "syntax"))
                return state, None
        except TooDeep:
            raise
        except RecursionError as exc:
            raise TooDeep from exc
        return state, None

    # ---- assignments ------------------------------------------------------------

    def assign(self, node: Node, seg: int, state: State, *, exported: bool,
               integer: bool = False, local: bool = False) -> None:
        pos = self._positions[seg]
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        if name_node is None:
            return
        ex = Expander(state, pos, _no_note)
        append = any(c.type == "+=" for c in node.children)
        index: str | None = None
        if name_node.type == "subscript":
            inner = name_node.child_by_field_name("name")
            idx = name_node.child_by_field_name("index")
            if inner is None:
                return
            name = text(inner)
            index = text(idx) if idx is not None else None
        else:
            name = text(name_node)
        if local:
            self._remember_local(state, name)
        old = state.lookup(name)
        if value_node is not None and value_node.type == "array":
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
            if append and old is not None and old.items is not None:
                items = list(old.items) + items
                unknown_reason = unknown_reason or old.array_unknown
            state.set(name, Var(EMPTY, tuple(items), exported, integer,
                                array_unknown=unknown_reason))
            return
        value: Scalar = ex.scalar(value_node) if value_node is not None else EMPTY
        is_int = integer or (old is not None and old.integer)
        if is_int:
            t = text_of(value)
            n = ex.arith_text(t) if t is not None else None
            value = known(str(n)) if n is not None else unknown(text(node), "not a known number")
        if index is not None:
            self._assign_index(state, name, index, value, ex, exported)
            return
        if append and old is not None:
            if is_int:
                a, b = text_of(old.scalar), text_of(value)
                value = (known(str(int(a) + int(b))) if a and b and a.lstrip("-").isdigit()
                         and b.lstrip("-").isdigit() else unknown(text(node), "not a number"))
            elif old.items is not None:
                state.set(name, replace(old, items=(*old.items, value)))
                return
            else:
                value = old.scalar + value
        state.set(name, Var(value, None, exported, is_int))

    def _assign_index(self, state: State, name: str, index: str, value: Scalar,
                      ex: Expander, exported: bool) -> None:
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
                self.assign(c, seg, state, exported=exported, integer="i" in flags, local=local)
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
        ex = Expander(state, pos, _no_note)
        name = text_of(ex.scalar(name_node))
        if name is None:
            return state, None
        if name in state.functions:
            return self.call(state.functions[name], node, seg, state), None
        if name not in _SPECIAL:
            return state, None
        args = ex.words(node.children_by_field_name("argument"))
        values = [w.value for w in args]
        if name in ("true", ":"):
            return state, True
        if name == "false":
            return state, False
        if name in ("test", "["):
            return state, _test_words([v for v in values if v != "]"])
        if name in ("cd", "pushd"):
            home = state.lookup("HOME")
            target = values[0] if values else (text_of(home.scalar) if home else None)
            if values and values[0] == "-":
                state.cwd = None
            else:
                state.chdir(target)
            return state, None
        if name == "popd":
            state.cwd = None
            return state, None
        if name in ("source", ".") and values and values[0] is not None:
            return self.source(values[0], seg, state), None
        if name in ("read", "mapfile", "readarray", "getopts"):
            self._read(name, values, pos.line_of(node) + 1, state)
            return state, None
        if name == "printf" and len(values) >= 2 and values[0] == "-v" and values[1]:
            state.set(values[1], Var(unknown("$" + values[1], "set by printf -v")))
            return state, None
        if name == "let":
            for w in args:
                if w.value is not None:
                    ex.arith_text(w.value)
            return state, None
        if name == "set":
            if "--" in values:
                rest = args[values.index("--") + 1:]
                state.positional = [w.parts for w in rest]
            return state, None
        if name == "shift" and state.positional is not None:
            n = int(values[0]) if values and values[0] and values[0].isdigit() else 1
            state.positional = state.positional[n:]
            return state, None
        if name == "eval":
            self.diagnostics.append(Diagnostic(
                "eval runs text as code; what it sets is not known", pos.span(node),
                "info", "eval"))
        return state, None

    def _read(self, name: str, values: list[str | None], line: int, state: State) -> None:
        """`read [-r] [-a NAME] [-p PROMPT] … NAMES`, mapfile/readarray: values known only
        at run time."""
        array = name in ("mapfile", "readarray")
        takes_value = "dinNptuCcO"  # options whose value is the next word
        i = 0
        while i < len(values):
            word = values[i] or ""
            if word.startswith("-") and len(word) > 1:
                for ch in word[1:]:
                    if ch == "a":
                        array = True  # the next word is the array's name
                    elif ch in takes_value:
                        i += 1
                i += 1
                continue
            if re.fullmatch(r"[A-Za-z_]\w*", word):
                reason = f"${word} is read at run time ({name} at line {line})"
                if array:
                    state.set(word, Var(EMPTY, (), array_unknown=reason))
                else:
                    state.set(word, Var(unknown("$" + word, reason)))
            i += 1

    def call(self, fn: Function, node: Node, seg: int, state: State) -> State:
        if self._call_depth >= MAX_CALL_DEPTH:
            return state
        self._called.add(fn.name)
        pos = self._positions[seg]
        ex = Expander(state, pos, _no_note)
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
        # Split into (condition nodes, body nodes) clauses, plus an optional else body.
        clauses: list[tuple[list[Node], list[Node]]] = []
        else_body: list[Node] | None = None
        cond: list[Node] = []
        body: list[Node] = []
        phase = "cond"
        for c in node.children:
            if c.type == "if":
                continue
            if c.type == "then":
                phase = "body"
            elif c.type == "fi":
                break
            elif c.type == "elif_clause":
                clauses.append((cond, body))
                cond, body, phase = [], [], "cond"
                sub_phase = "cond"
                for e in c.children:
                    if e.type == "elif":
                        continue
                    if e.type == "then":
                        sub_phase = "body"
                    elif sub_phase == "cond":
                        cond.append(e)
                    else:
                        body.append(e)
                phase = "done"
            elif c.type == "else_clause":
                else_body = [e for e in c.children if e.type != "else"]
            elif phase == "cond":
                cond.append(c)
            elif phase == "body":
                body.append(c)
        clauses.append((cond, body))
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
            ex = Expander(state, pos, _no_note)
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
        ex = Expander(state, pos, _no_note)
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
    ex = Expander(state, pos, _no_note)
    ex.unset_empty = True
    return ex


def _no_note(_message: str, _span: Span) -> None:
    return None


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
        if op == "-z":
            return value == ""
        if op == "-n":
            return value != ""
        if op == "-v":
            return ex.state.lookup(value) is not None or None
        return None  # file tests and the like depend on the machine
    if t == "binary_expression":
        left = node.child_by_field_name("left")
        right = node.child_by_field_name("right")
        op_node = node.child_by_field_name("operator")
        if left is None or right is None or op_node is None:
            return None
        op = text(op_node)
        if op in ("&&", "-a", "||", "-o"):
            a = _test_expr(left, ex)
            if op in ("&&", "-a") and a is False:
                return False
            if op in ("||", "-o") and a is True:
                return True
            b = _test_expr(right, ex)
            if a is None or b is None:
                return None
            return (a and b) if op in ("&&", "-a") else (a or b)
        a_val = text_of(ex.scalar(left))
        b_val = text_of(ex.scalar(right))
        if a_val is None or b_val is None:
            return None
        return _compare(op, a_val, b_val, pattern=node.parent is not None)
    value = text_of(ex.scalar(node))
    if value is None:
        return None
    return value != ""


def _compare(op: str, a: str, b: str, *, pattern: bool = False) -> Status:
    if op in ("=", "=="):
        return fnmatch.fnmatchcase(a, b) if pattern and any(ch in b for ch in "*?[") else a == b
    if op == "!=":
        return a != b
    if op == "=~":
        try:
            return re.search(b, a) is not None
        except re.error:
            return None
    nums = {"-eq": lambda x, y: x == y, "-ne": lambda x, y: x != y, "-lt": lambda x, y: x < y,
            "-le": lambda x, y: x <= y, "-gt": lambda x, y: x > y, "-ge": lambda x, y: x >= y}
    fn = nums.get(op)
    if fn is None:
        return None
    if not re.fullmatch(r"\s*-?\d+\s*", a) or not re.fullmatch(r"\s*-?\d+\s*", b):
        return None
    return bool(fn(int(a), int(b)))


def _test_words(args: list[str | None]) -> Status:
    if any(a is None for a in args):
        return None
    words = [a for a in args if a is not None]
    if len(words) == 1:
        return words[0] != ""
    if len(words) == 2:
        if words[0] == "-z":
            return words[1] == ""
        if words[0] == "-n":
            return words[1] != ""
        if words[0] == "!":
            return words[1] == ""
        return None
    if len(words) == 3:
        return _compare(words[1], words[0], words[2])
    return None

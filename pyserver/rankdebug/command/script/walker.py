"""The walker: a script's statements in order, as bash would run them, without running
any command; each simple command met on the way is reported, with the state at that
moment, to a callback. Function calls and `source` are followed here; assignments
(assign.py), control flow (control.py), builtins (builtins.py) and `[ ]` tests
(conditions.py) each have their module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tree_sitter import Node

from rankdebug.command.expand.arith import Arith
from rankdebug.command.expand.chunks import TooDeep
from rankdebug.command.expand.expander import Expander
from rankdebug.command.plan import Diagnostic
from rankdebug.command.script import control
from rankdebug.command.script.assign import assign, declare, unset
from rankdebug.command.script.builtins import BUILTINS, Run
from rankdebug.command.script.conditions import test_expander, test_status
from rankdebug.command.script.walk import Status
from rankdebug.command.source import Segment
from rankdebug.command.state import Function, State, text_of
from rankdebug.command.syntax import (
    Positions,
    broken_text,
    glued_prefix,
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


class Walker:
    """Walks segments of shell, reporting each simple command to ``on_command``."""

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
            assign(c, self._positions[seg], state)
        return state, True

    def _declaration(self, node: Node, seg: int, state: State,
                     background: bool) -> tuple[State, Status]:
        if node.type == "unset_command":
            unset(node, state)
        else:
            declare(node, self._positions[seg], state)
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
        return state, test_status(node, test_expander(state, self._positions[seg]))

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

    # ---- commands ------------------------------------------------------------------

    def command(self, node: Node, seg: int, state: State,
                background: bool) -> tuple[State, Status]:
        pos = self._positions[seg]
        for c in glued_prefix(node):  # `A=1 B=2` on a line of its own: set, as bash does
            assign(c, pos, state)
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
        builtin = BUILTINS.get(name)
        if builtin is None:
            return state, None
        args = [*lead, *ex.words(arg_nodes)]
        return builtin(self, Run(name, node, seg, state, args, ex))

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


# ---- statements -------------------------------------------------------------------

_Statement = Callable[[Walker, Node, int, State, bool], tuple[State, Status]]
_STATEMENTS: dict[str, _Statement] = {
    "command": Walker.command,
    "variable_assignment": Walker._assignments,
    "variable_assignments": Walker._assignments,
    "declaration_command": Walker._declaration,
    "unset_command": Walker._declaration,
    "redirected_statement": Walker._redirected,
    "if_statement": lambda w, node, seg, state, bg: control.if_statement(w, node, seg, state),
    **dict.fromkeys(("for_statement", "c_style_for_statement", "while_statement"),
                    lambda w, node, seg, state, bg: control.loop(w, node, seg, state)),
    "case_statement": lambda w, node, seg, state, bg: control.case(w, node, seg, state),
    "list": control.list_,
    "pipeline": Walker._pipeline,
    "subshell": Walker._subshell,
    "compound_statement": Walker._compound,
    "negated_command": Walker._negated,
    "test_command": Walker._test,
    "function_definition": Walker._function,
    "ERROR": Walker._error,
}


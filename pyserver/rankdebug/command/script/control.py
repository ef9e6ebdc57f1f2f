"""Control flow: `if`/`elif`/`else`, `case`, loops and `&&`/`||`. A branch is decided
when its condition is known; otherwise each branch is walked and the states after them
merged, a value that differs becoming unknown with the reason why."""

from __future__ import annotations

import fnmatch

from tree_sitter import Node

from rankdebug.command.expand.expander import Expander
from rankdebug.command.script.walk import Status, Walk
from rankdebug.command.state import State, Var, known, merge, text_of, unknown
from rankdebug.command.syntax import text

# An if statement's (condition, body) clauses, and its else body (None when it has none).
_Branches = tuple[list[tuple[list[Node], list[Node]]], list[Node] | None]


def condition(w: Walk, nodes: list[Node], seg: int, state: State) -> tuple[State, Status]:
    status: Status = None
    for c in nodes:
        if c.is_named and c.type != "comment":
            state, status = w.stmt(c, seg, state)
    return state, status


def if_statement(w: Walk, node: Node, seg: int, state: State) -> tuple[State, Status]:
    branches = _if_clauses(node)
    clauses, else_body = branches
    line = w.positions(seg).line_of(node) + 1
    why = f"depends on which branch of the if at line {line} runs"
    outcomes: list[State] = []
    cur = state
    for cond_nodes, body_nodes in clauses:
        cur, status = condition(w, cond_nodes, seg, cur)
        if status is True:
            result = w.block(body_nodes, seg, cur.copy())
            # Branches that cannot run are still walked, so their commands get plans.
            _walk_dead(w, branches, cond_nodes, seg, cur)
            return (merge([result, *outcomes], why) if outcomes else result), None
        if status is None:
            outcomes.append(w.block(body_nodes, seg, cur.copy()))
        else:
            w.block(body_nodes, seg, cur.copy())  # dead branch
    if else_body is not None:
        outcomes.append(w.block(else_body, seg, cur.copy()))
    else:
        outcomes.append(cur)
    if len(outcomes) == 1:
        return outcomes[0], None
    return merge(outcomes, why), None


def _walk_dead(w: Walk, branches: _Branches, taken: list[Node], seg: int,
               state: State) -> None:
    """The clauses after the one taken (``taken``: its condition), and the else body."""
    clauses, else_body = branches
    after = False
    for cond_nodes, body_nodes in clauses:
        if after:
            condition(w, cond_nodes, seg, state.copy())
            w.block(body_nodes, seg, state.copy())
        if cond_nodes is taken:
            after = True
    if else_body is not None:
        w.block(else_body, seg, state.copy())


def loop(w: Walk, node: Node, seg: int, state: State) -> tuple[State, Status]:
    pos = w.positions(seg)
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
        inner, _ = condition(w, conds, seg, inner)
    body = node.child_by_field_name("body")
    after = w.block(body.children, seg, inner) if body is not None else inner
    if node.type == "for_statement" and not values and node.children_by_field_name("value"):
        return state, None  # `for x in "$@"` with no arguments: the body never runs
    out = merge([state, after], why)
    if node.type == "for_statement" and var_name:
        if values and all(v is not None for v in values):
            out.set(var_name, Var(known(values[-1] or "")))
        else:
            out.set(var_name, Var(unknown("$" + var_name, f"${var_name} {why}")))
    return out, None


def case(w: Walk, node: Node, seg: int, state: State) -> tuple[State, Status]:
    pos = w.positions(seg)
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
        result = w.block(body, seg, state.copy())
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


def list_(w: Walk, node: Node, seg: int, state: State,
          background: bool) -> tuple[State, Status]:
    kids = node.children
    if len(kids) < 3:
        return w.block(kids, seg, state), None
    left, op, right = kids[0], kids[1].type, kids[2]
    state, status = w.stmt(left, seg, state)
    line = w.positions(seg).line_of(node) + 1
    why = f"depends on the result of the command at line {line}"
    runs = {"&&": status, "||": None if status is None else not status}.get(op)
    if runs is True:
        return w.stmt(right, seg, state, background)
    if runs is False:
        w.stmt(right, seg, state.copy(), background)
        return state, status
    after, _ = w.stmt(right, seg, state.copy(), background)
    return merge([after, state], why), None



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


def _if_clauses(node: Node) -> _Branches:
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


"""Assignments: `X=v`, `X+=v`, `A=(x y)`, `A[i]=v`, `declare`/`export`/`local` (with
`-i` arithmetic, `-a`, `-x`, `-g`) and `unset`."""

from __future__ import annotations

from dataclasses import dataclass, replace

from tree_sitter import Node

from rankdebug.command.expand.expander import Expander
from rankdebug.command.state import EMPTY, Scalar, State, Var, known, text_of, unknown
from rankdebug.command.syntax import Positions, text


@dataclass(frozen=True)
class Decl:
    """How `declare`, `export` or `local` (or nothing) qualifies an assignment."""

    exported: bool = False
    integer: bool = False
    local: bool = False


PLAIN = Decl()
_Target = tuple[str, str | None]  # NAME or NAME[INDEX]


def _target(name_node: Node) -> _Target | None:
    if name_node.type != "subscript":
        return text(name_node), None
    inner = name_node.child_by_field_name("name")
    idx = name_node.child_by_field_name("index")
    if inner is None:
        return None
    return text(inner), (text(idx) if idx is not None else None)


def assign(node: Node, pos: Positions, state: State, decl: Decl = PLAIN) -> None:
    """`X=v`, `A=(x y)`, `A[i]=v`, as `declare`, `export` or `local` qualify them."""
    name_node = node.child_by_field_name("name")
    value_node = node.child_by_field_name("value")
    target = _target(name_node) if name_node is not None else None
    if target is None:
        return
    ex = Expander(state, pos)
    if decl.local:
        _remember_local(state, target[0])
    if value_node is not None and value_node.type == "array":
        _assign_array(node, state, target[0], ex, decl)
        return
    _assign_scalar(node, state, target, ex, decl)

def _remember_local(state: State, name: str) -> None:
    if state.local_frames and name not in state.local_frames[-1]:
        state.local_frames[-1][name] = state.vars.get(name)

def declare(node: Node, pos: Positions, state: State) -> None:
    """`declare`, `typeset`, `export`, `local`, `readonly` with their flags."""
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
            assign(c, pos, state, Decl(exported, "i" in flags, local))
        elif c.type == "variable_name":
            name = text(c)
            if local:
                _remember_local(state, name)
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

def unset(node: Node, state: State) -> None:
    functions = any(c.type == "word" and text(c) == "-f" for c in node.children)
    for c in node.named_children:
        if c.type in ("variable_name", "word") and not text(c).startswith("-"):
            if functions:
                state.functions.pop(text(c), None)
            else:
                state.unset(text(c))


def _assign_array(node: Node, state: State, name: str, ex: Expander, decl: Decl) -> None:
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
                   decl: Decl) -> None:
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


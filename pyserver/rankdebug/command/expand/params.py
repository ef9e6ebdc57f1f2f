"""Parameter expansion: ``$X``, ``${X}``, their operators (``${X:-d}``, ``${#X}``,
``${!X}``, ``${X%.*}``, ``${X/a/b}``, ``${X:1:2}``, ``${X^^}``), positional parameters and
``"$@"``, arrays and their slices."""

from __future__ import annotations

import re

from tree_sitter import Node

from rankdebug.command.expand.arith import Arith
from rankdebug.command.expand.chunks import BREAK, Chunk, Chunks, Expansion, Param
from rankdebug.command.expand.string_ops import string_op
from rankdebug.command.state import (
    EMPTY,
    Scalar,
    Var,
    known,
    normalize,
    reason_of,
    text_of,
    unknown,
)
from rankdebug.command.syntax import text
from rankdebug.command.words import Part

# Parameters that change from run to run.
_VOLATILE = frozenset({"?", "$", "!", "-", "_", "RANDOM", "SECONDS", "LINENO", "BASHPID", "PPID",
                       "SRANDOM", "EPOCHSECONDS"})
_UNKNOWN_ARGS = {"@": "the script's arguments are not known here",
                 "*": "the script's arguments are not known here",
                 "#": "the number of arguments is not known here"}


def expansion(ex: Expansion, node: Node, quoted: bool) -> Chunks:
    src = text(node)
    kids = [c for c in node.children if c.type not in ("$", "${", "}")]
    prefix = ""
    if kids and kids[0].type in ("#", "!") and len(kids) > 1:
        prefix = kids[0].type
        kids = kids[1:]
    if not kids:
        return [Chunk(known(src), False)]
    name, index = _target_name(kids[0])
    if name is None:
        return [Chunk(unknown(src, f"{src} cannot be read"), False)]
    if prefix == "!":
        name = _indirect(ex, name, index, src)
        if name is None:
            return [Chunk(unknown(src, f"{src}: indirect name is unknown"), False)]
        index = None
    items = param_items(ex, name, index, src)  # list of scalars, or None when unset
    if prefix == "#":
        return [_length(items, index, src)]
    param = Param(name, index, src, quoted)
    if kids[1:]:
        return _operator(ex, param, items, kids[1:])
    return _emit(ex, param, items)


def _indirect(ex: Expansion, name: str, index: str | None, src: str) -> str | None:
    """The name ``${!name}`` refers to, when it is known."""
    ref_name = text_of(_param_scalar(ex, name, index, src))
    if ref_name is None or not re.fullmatch(r"\w+", ref_name):
        return None
    return ref_name


def _emit(ex: Expansion, p: Param, items: list[Scalar] | str | None) -> Chunks:
    if isinstance(items, str):
        return [p.unknown(items)]
    if items is None:
        return [_unset(ex, p)]
    if p.name in ("@", "*") or p.index in ("@", "*"):
        return _every_item(p, items)
    value = items[0] if items else EMPTY
    if value and not any(part.known and part.text.strip() for part in value):
        # Wholly unknown: show the reference as written ($SQUAD_DIR), keep the
        # inner reason. Partly known values keep their known words for splitting.
        return [p.unknown(reason_of(value))]
    return [p.chunk(value)]


def _unset(ex: Expansion, p: Param) -> Chunk:
    """A parameter that is not set."""
    if ex.state.env_complete or ex.unset_empty or p.name in ("@", "*"):
        return p.chunk(EMPTY)
    if p.name.isdigit():
        return p.unknown(f"${p.name} is a script argument, and none was given")
    return p.unknown(f"${p.name} is not set in the script (it may come from the environment)")


def param_items(ex: Expansion, name: str, index: str | None, src: str) -> list[Scalar] | str | None:
    """Values of a parameter: a list (one item for a scalar), a reason if unknown,
    or None when unset."""
    st = ex.state
    if name in ("@", "*", "#") or name.isdigit():
        return _positional_items(ex, name)
    if name in _VOLATILE:
        return f"${name} changes from run to run"
    if name == "PWD" and st.lookup("PWD") is None and st.cwd is not None:
        return [known(st.cwd)]
    if name == "BASH_SOURCE" and st.script_path:
        return [known(st.script_path)]
    var = st.lookup(name)
    if var is None or var.is_array:
        return None if var is None else _array_items(ex, var, index, src)
    return [var.value] if index in (None, "@", "*", "0") else None


def _positional_items(ex: Expansion, name: str) -> list[Scalar] | str | None:
    """$0, $1..., $@, $* and $#."""
    st = ex.state
    if name.isdigit() and int(name) == 0:
        return [known(st.script_path)] if st.script_path else "$0 is not known"
    if st.positional is None:
        return _UNKNOWN_ARGS.get(name, f"${name} is an argument that is not known here")
    if name in ("@", "*"):
        return list(st.positional)
    if name == "#":
        return [known(str(len(st.positional)))]
    n = int(name)
    return [st.positional[n - 1]] if n <= len(st.positional) else None


def _array_items(ex: Expansion, var: Var, index: str | None, src: str) -> list[Scalar] | str | None:
    if var.array_unknown:
        return var.array_unknown
    assert var.items is not None
    if index is None or index in ("@", "*"):
        return list(var.items) if index else list(var.items[:1])
    i = ex.arith_text(index)
    if i is None:
        return f"{src}: the index is not known"
    return [var.items[i]] if -len(var.items) <= i < len(var.items) else None


def _param_scalar(ex: Expansion, name: str, index: str | None, src: str) -> Scalar:
    items = param_items(ex, name, index, src)
    if isinstance(items, str):
        return unknown(src, items)
    if not items:
        return EMPTY
    return items[0]


def _operator(ex: Expansion, p: Param, items: list[Scalar] | str | None,
              rest: list[Node]) -> Chunks:
    """``${X:-d}``, ``${X:+w}``, ``${X#p}``, ``${X/a/b}``, ``${X:1:2}``, ``${X^^}``..."""
    op = rest[0].type
    arg = _op_arg(ex, op, rest[1:])
    if isinstance(items, str):
        return [p.unknown(items)]
    if op == ":" and items is not None and (p.name in ("@", "*") or p.index in ("@", "*")):
        return _slice(ex, p, items, [a for a in rest[1:] if a.type != ":"])
    if op in (":-", "-", ":=", "=", ":?", "?"):
        return _use_default(ex, p, items, op, arg)
    value = _value(p, items)
    if op in (":+", "+"):
        return [_alternative(p, items is None, op, arg, value)]
    return [_transform(ex, p, items is None, rest, value)]


def _slice(ex: Expansion, p: Param, items: list[Scalar], nums: list[Node]) -> Chunks:
    """``${@:offset:length}`` and ``${A[@]:offset:length}``: items, not characters (the
    positional parameters count from $0)."""
    full = list(items)
    if p.index is None:  # $@ and $*: offset 0 is $0
        zero = ex.state.script_path
        full.insert(0, known(zero) if zero else unknown("$0", "$0 is not known"))
    off = _arith_node(ex, nums[0]) if nums else None
    length = _arith_node(ex, nums[1]) if len(nums) > 1 else len(full)
    if off is None or length is None or length < 0:
        return [p.unknown("the slice's offset or length is not known")]
    if off < 0:
        off += len(full)
    sliced = full[off:off + length] if off >= 0 else []
    return _every_item(p, sliced)


def _arith_node(ex: Expansion, node: Node) -> int | None:
    return Arith(ex).eval(node) if node.type != "word" else ex.arith_text(text(node))


def _op_arg(ex: Expansion, op: str, args: list[Node]) -> Scalar:
    """The word after an operator (the default of ``${X:-default}``)."""
    if not args or op == ":":
        return EMPTY
    parts: list[Part] = []
    for a in args:
        if a.type in ("/", ":"):
            continue
        parts.extend(ex.scalar(a))
    return normalize(tuple(parts))


def _value(p: Param, items: list[Scalar] | None) -> Scalar:
    """What an operator works on: the items joined (``${A[@]}``), else the first."""
    if items is None:
        return EMPTY
    return _join(items) if p.index in ("@", "*") else items[0] if items else EMPTY


def _use_default(ex: Expansion, p: Param, items: list[Scalar] | None, op: str,
                 arg: Scalar) -> Chunks:
    """``${X:-d}``, ``${X:=d}``, ``${X:?msg}`` and their forms without ``:``."""
    value = _value(p, items)
    unset = items is None
    empty = unset or text_of(value) == ""
    use_default = empty if op.startswith(":") else unset
    if not unset and op.startswith(":") and text_of(value) is None:
        # Set to something unknown: might be empty, so the default might apply.
        return [p.unknown(reason_of(value))]
    if not use_default:
        return _emit(ex, p, items)
    if op in (":=", "=") and not p.index:
        ex.state.set(p.name, Var(arg))
    if op in (":?", "?"):
        return [p.unknown(f"${p.name} must be set ({p.src})")]
    return [p.chunk(arg)]


def _transform(ex: Expansion, p: Param, unset: bool, rest: list[Node], value: Scalar) -> Chunk:
    """The string operators: ``${X#p}``, ``${X/a/b}``, ``${X:1:2}``, ``${X^^}``..."""
    if unset and not ex.state.env_complete:
        return p.unknown(f"${p.name} is not set in the script")
    t = text_of(value)
    if t is None:
        return p.unknown(reason_of(value))
    result = string_op(rest[0].type, t, rest, ex, p.src)
    if result is None:
        return p.unknown(f"{p.src}: this expansion is not evaluated")
    return p.chunk(known(result))


def _join(items: list[Scalar]) -> Scalar:
    """Items joined with spaces (``$*``, ``${A[*]}``)."""
    joined: list[Part] = []
    for i, item in enumerate(items):
        if i:
            joined.append(Part(" "))
        joined.extend(item)
    return tuple(joined)


def _length(items: list[Scalar] | str | None, index: str | None, src: str) -> Chunk:
    """``${#X}`` and ``${#A[@]}``."""
    if isinstance(items, str):
        return Chunk(unknown(src, items), False)
    if index in ("@", "*"):
        return Chunk(known(str(len(items or []))), False)
    value = items[0] if items else EMPTY
    t = text_of(value)
    if t is None:
        return Chunk(unknown(src, reason_of(value)), False)
    return Chunk(known(str(len(t))), False)


def _every_item(p: Param, items: list[Scalar]) -> Chunks:
    """``$@``, ``$*``, ``${A[@]}``, ``${A[*]}``: one word per item, or all in one."""
    if p.index == "@" or (p.name == "@" and p.index is None):
        out: Chunks = []
        for i, item in enumerate(items):
            if i and p.quoted:
                out.append(BREAK)
            elif i:
                out.append(Chunk(known(" "), True))
            out.append(p.chunk(item))
        return out
    if p.index == "*" or p.name == "*":
        return [p.chunk(_join(items))]
    return [p.chunk(items[0] if items else EMPTY)]


def _alternative(p: Param, unset: bool, op: str, arg: Scalar, value: Scalar) -> Chunk:
    """``${X:+word}`` and ``${X+word}``."""
    if op == ":+" and not unset and text_of(value) is None:
        return p.unknown(reason_of(value))
    empty = unset or text_of(value) == ""
    use_alt = not empty if op == ":+" else not unset
    return p.chunk(arg if use_alt else EMPTY)


def _target_name(node: Node) -> tuple[str | None, str | None]:
    if node.type in ("variable_name", "special_variable_name"):
        return text(node), None
    if node.type == "subscript":
        name = node.child_by_field_name("name")
        idx = node.child_by_field_name("index")
        if name is None:
            return None, None
        return text(name), (text(idx) if idx is not None else None)
    if node.type in ("word", "number") and text(node).isdigit():
        return text(node), None
    return None, None


def is_at(node: Node) -> bool:
    if node.type not in ("simple_expansion", "expansion"):
        return False
    kids = [c for c in node.children if c.type not in ("$", "${", "}")]
    if len(kids) != 1 and not (node.type == "expansion" and kids and kids[1:2]
                               and kids[1].type == ":"):  # "${@:2}" slices items too
        return False
    k = kids[0]
    if k.type == "special_variable_name":
        return text(k) == "@"
    if k.type == "subscript":
        idx = k.child_by_field_name("index")
        return idx is not None and text(idx) == "@"
    return False


"""Bash arithmetic, ``$(( ))`` (and, for the walker, ``(( ))``, ``let`` and ``declare -i``
values), over tree-sitter nodes; None means unknown."""

from __future__ import annotations

import re
from collections.abc import Callable

from tree_sitter import Node

from rankdebug.command.expand.chunks import MAX_DEPTH, Expansion, TooDeep
from rankdebug.command.state import Var, known, reason_of, text_of, unknown
from rankdebug.command.syntax import binary_parts, text


class Arith:
    """$(( )) over tree-sitter nodes; None means unknown (reason in self.reason)."""

    def __init__(self, ex: Expansion) -> None:
        self.ex = ex
        self.reason = ""

    def eval(self, node: Node) -> int | None:
        self.ex.depth += 1
        try:
            if self.ex.depth > MAX_DEPTH:
                raise TooDeep
            return self._eval(node)
        finally:
            self.ex.depth -= 1

    def _unknown(self, why: str) -> None:
        if not self.reason:
            self.reason = why

    def _var(self, name: str) -> int | None:
        t = self._var_text(name)
        if t is None:
            return None
        t = t.strip()
        if re.fullmatch(r"-?\d+", t):
            return int(t)
        if t == "":
            return 0
        v = self.ex.arith_text(t)
        if v is None:
            self._unknown(f"${name} is '{t}', not a number")
        return v

    def _var_text(self, name: str) -> str | None:
        """A variable's text in arithmetic ('' when unset and the environment is known)."""
        st = self.ex.state
        if name.isdigit() or name in ("#", "@", "RANDOM", "$", "?"):
            items = self.ex.param_items(name, None, "$" + name)
            if isinstance(items, str) or not items:
                self._unknown(items if isinstance(items, str) else f"${name} is not set")
                return None
            return text_of(items[0])
        var = st.lookup(name)
        if var is None:
            if st.env_complete:
                return ""
            self._unknown(f"${name} is not set in the script")
            return None
        t = text_of(var.scalar)
        if t is None:
            self._unknown(reason_of(var.scalar))
        return t

    def _eval(self, node: Node) -> int | None:
        evaluate = _ARITH.get(node.type)
        if evaluate is None:
            self._unknown(f"{text(node)} cannot be computed")
            return None
        return evaluate(self, node)

    def _word(self, node: Node) -> int | None:
        w = text(node)
        n = _parse_int(w)
        if n is not None:
            return n
        if re.fullmatch(r"[A-Za-z_]\w*", w):
            return self._var(w)
        self._unknown(f"'{w}' is not a number")
        return None

    def _expanded(self, node: Node) -> int | None:
        """An expansion, string or nested $(( )): its value read as a number."""
        value = self.ex.scalar(node)
        s = text_of(value)
        if s is None:
            self._unknown(reason_of(value))
            return None
        n = _parse_int(s.strip())
        if n is None:
            n = self.ex.arith_text(s)
        if n is None:
            self._unknown(f"{text(node)} is '{s}', not a number")
        return n

    def _parenthesized(self, node: Node) -> int | None:
        kids = node.named_children
        return self.eval(kids[0]) if kids else None

    def _unary(self, node: Node) -> int | None:
        kids = node.named_children
        op = next((c.type for c in node.children if not c.is_named), "")
        if not kids:
            return None
        v = self.eval(kids[0])
        if v is None:
            return None
        if op in ("++", "--"):
            return v  # value unchanged for our purposes; the variable becomes unknown
        return {"-": -v, "+": v, "!": int(not v), "~": ~v}.get(op)

    def _ternary(self, node: Node) -> int | None:
        kids = node.named_children
        if len(kids) != 3:
            return None
        c = self.eval(kids[0])
        if c is None:
            return None
        return self.eval(kids[1] if c else kids[2])

    def _binary(self, node: Node) -> int | None:
        parts = binary_parts(node)
        if parts is None:
            return None
        left, op_node, right = parts
        op = op_node.type
        if op in _ASSIGNMENTS:
            return self._assign(left, op, right)
        a = self.eval(left)
        if op == "&&" and a == 0:
            return 0
        if op == "||" and a not in (None, 0):
            return 1
        b = self.eval(right)
        if a is None or b is None:
            return None
        result = _binop(op, a, b)
        if result is None:
            self._unknown(f"{text(node)} cannot be computed")
        return result

    def _assign(self, left: Node, op: str, right: Node) -> int | None:
        """``X = 1``, ``X += 2``...: the value, and the variable set to it."""
        result = self.eval(right)
        if op != "=":
            cur = self.eval(left)
            result = None if cur is None or result is None else _binop(op[:-1], cur, result)
        name = text(left)
        if re.fullmatch(r"[A-Za-z_]\w*", name):
            self.ex.state.set(name, Var(known(str(result)) if result is not None
                                        else unknown("$" + name, self.reason)))
        return result


_ASSIGNMENTS = frozenset({"=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^="})
_ARITH: dict[str, Callable[[Arith, Node], int | None]] = {
    "number": lambda ar, n: _parse_int(text(n)),
    "word": Arith._word,
    "variable_name": lambda ar, n: ar._var(text(n)),
    **dict.fromkeys(("simple_expansion", "expansion", "command_substitution", "string",
                     "arithmetic_expansion", "concatenation", "raw_string"), Arith._expanded),
    "parenthesized_expression": Arith._parenthesized,
    "unary_expression": Arith._unary,
    "postfix_expression": Arith._unary,
    "ternary_expression": Arith._ternary,
    "binary_expression": Arith._binary,
}


def _quotient(a: int, b: int) -> int | None:
    """Division as bash does it: truncated toward zero."""
    if b == 0:
        return None
    return abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)


def _remainder(a: int, b: int) -> int | None:
    q = _quotient(a, b)
    return None if q is None else a - q * b


_BINOPS: dict[str, Callable[[int, int], int | None]] = {
    "+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y,
    "/": _quotient, "%": _remainder,
    "**": lambda x, y: x**y if 0 <= y <= 64 and abs(x) < 1 << 32 else None,
    "<<": lambda x, y: x << y if 0 <= y < 64 else None,
    ">>": lambda x, y: x >> y if 0 <= y < 64 else None,
    "&": lambda x, y: x & y, "|": lambda x, y: x | y, "^": lambda x, y: x ^ y,
    "==": lambda x, y: int(x == y), "!=": lambda x, y: int(x != y),
    "<": lambda x, y: int(x < y), "<=": lambda x, y: int(x <= y),
    ">": lambda x, y: int(x > y), ">=": lambda x, y: int(x >= y),
    "&&": lambda x, y: int(bool(x and y)), "||": lambda x, y: int(bool(x or y)),
}


def _binop(op: str, a: int, b: int) -> int | None:
    fn = _BINOPS.get(op)
    try:
        return fn(a, b) if fn else None
    except (OverflowError, ValueError):
        return None


def _parse_int(s: str) -> int | None:
    s = s.strip()
    try:
        if re.fullmatch(r"-?0[xX][0-9a-fA-F]+", s):
            return int(s, 16)
        if re.fullmatch(r"-?0[0-7]+", s):
            return int(s, 8)
        if re.fullmatch(r"-?\d+", s):
            return int(s)
        m = re.fullmatch(r"(\d+)#([0-9a-zA-Z@_]+)", s)
        if m and 2 <= int(m.group(1)) <= 36:
            return int(m.group(2), int(m.group(1)))
    except ValueError:
        return None
    return None


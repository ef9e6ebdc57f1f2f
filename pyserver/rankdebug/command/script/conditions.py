"""`[ ]`, `[[ ]]` and `test`: whether a condition holds, when its operands are known."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable

from tree_sitter import Node

from rankdebug.command.expand.expander import Expander
from rankdebug.command.script.walk import Status
from rankdebug.command.state import State, text_of
from rankdebug.command.syntax import Positions, binary_parts, text


def test_expander(state: State, pos: Positions) -> Expander:
    ex = Expander(state, pos)
    ex.unset_empty = True
    return ex


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


def test_words(args: list[str | None]) -> Status:
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

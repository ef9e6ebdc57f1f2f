"""Bash word expansion over tree-sitter nodes, without running anything: the
:class:`Expander`, which turns an argument node into argv words (:meth:`Expander.fields`)
or into one value without word splitting (:meth:`Expander.scalar`): quoting and escapes,
``~``, ``{1..4}``, and the chunks each part of a word expands to (parameters: params.py;
``$(( ))``: arith.py; ``$( )``: substitution.py), joined and split into words (fields.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tree_sitter import Node

from rankdebug.command.expand import heredoc, params
from rankdebug.command.expand.arith import Arith
from rankdebug.command.expand.chunks import (
    BREAK,
    MAX_DEPTH,
    Chunk,
    Chunks,
    TooDeep,
    leading_blanks,
)
from rankdebug.command.expand.fields import Fields
from rankdebug.command.expand.substitution import substitution
from rankdebug.command.state import (
    EMPTY,
    Scalar,
    State,
    known,
    normalize,
    reason_of,
    text_of,
    unknown,
)
from rankdebug.command.syntax import Positions, text
from rankdebug.command.words import Part, Word


class Expander:
    """Turns argument nodes into argv words or single values, in a given shell state."""

    def __init__(self, state: State, pos: Positions) -> None:
        self.state = state
        self.pos = pos
        self.depth = 0
        # In `[ ]` tests a variable the script never sets reads as empty, as it
        # does for ${X:-default}; elsewhere it is unknown (it may come from the env).
        self.unset_empty = False

    # ---- public ---------------------------------------------------------

    def words(self, nodes: list[Node]) -> list[Word]:
        out: list[Word] = []
        for node in nodes:
            out.extend(self.fields(node))
        return out

    def fields(self, node: Node) -> list[Word]:
        """The argv words one argument node expands to (0, 1 or more)."""
        span = self.pos.span(node)
        src = text(node)
        words = []
        for norm in self.field_values(node):
            reason = reason_of(norm)
            words.append(Word(norm, span, src, reason or None))
        return words

    def field_values(self, node: Node) -> list[Scalar]:
        """Like fields(), without positions: for array items and loop lists."""
        t = node.type
        if t in ("word", "number") and node.child_count == 0:
            raw = text(node)
            if not any(ch in raw for ch in "\\~"):
                return [known(raw)] if raw else []
        if t == "raw_string":
            return [known(text(node)[1:-1])]
        if t == "brace_expression":
            return [known(s) for s in self._brace(node)]
        fields = Fields()
        for ch in self.chunks(node, quoted=False):
            if not isinstance(ch, Chunk):  # BREAK
                fields.end_word()
            elif ch.split:
                fields.split(ch.value)
            else:
                fields.add(ch.value)
        return fields.words()

    def scalar(self, node: Node) -> Scalar:
        """The node's value without word splitting (assignment values, case words)."""
        t = node.type
        if t in ("word", "number") and node.child_count == 0:
            raw = text(node)
            if not any(ch in raw for ch in "\\~"):
                return known(raw) if raw else EMPTY
        elif t == "raw_string":
            return known(text(node)[1:-1])
        out: list[Part] = []
        for ch in self.chunks(node, quoted=True):
            if ch is BREAK:
                out.append(Part(" "))
            else:
                assert isinstance(ch, Chunk)
                out.extend(ch.value)
        return normalize(tuple(out))

    # ---- chunks ---------------------------------------------------------

    def chunks(self, node: Node, quoted: bool) -> Chunks:
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise TooDeep
            return self._chunks_inner(node, quoted)
        finally:
            self.depth -= 1

    def _chunks_inner(self, node: Node, quoted: bool) -> Chunks:
        t = node.type
        if t in ("string", "translated_string"):
            return self._string(node)
        if t in ("simple_expansion", "expansion"):
            return params.expansion(self, node, quoted)
        if t in ("concatenation", "command_name"):
            # A command's name is a word like any other: `$CMD args` expands and splits.
            return [chunk for c in node.children for chunk in self.chunks(c, quoted)]
        if t == "array":
            return [Chunk(self.scalar(c), False) for c in node.named_children
                    if c.type != "comment"]
        return [] if t in ("$", '"', "'") else [self._single(node, quoted)]

    def _single(self, node: Node, quoted: bool) -> Chunk:
        """A node that makes one chunk (a literal, an arithmetic or command substitution)."""
        make = _SINGLE.get(node.type)
        if make is None:
            # Anything else (test operators, heredoc parts): its literal text.
            return Chunk(known(text(node)), False)
        value, splits = make(self, node)
        return Chunk(value, splits and not quoted)

    def _word(self, node: Node) -> Scalar:
        raw = text(node)
        if "\\" in raw:
            raw = re.sub(r"\\\n", "", raw)
            raw = re.sub(r"\\(.)", r"\1", raw, flags=re.S)
        first = node.parent is None or node.parent.type != "concatenation" or (
            node.parent.children[0] == node)
        if raw.startswith("~") and first and text(node).startswith("~"):
            head, sep, rest = raw.partition("/")
            if head == "~":
                home = self.state.lookup("HOME")
                home_text = text_of(home.scalar) if home is not None else None
                if home_text is None:
                    return (Part("~", False, "~ is the home directory, not known here"),
                            Part(sep + rest))
                return known(f"{home_text}{sep}{rest}")
        return known(raw)

    def _string(self, node: Node) -> Chunks:
        out: Chunks = []
        children = [c for c in node.children if c.type != '"']
        only_at = len(children) == 1 and params.is_at(children[0])
        if not children:
            return [Chunk(EMPTY, False)]
        for c in children:
            if c.type == "string_content":
                out.append(Chunk(known(_unescape_dq(text(c))), False))
            else:
                if lead := leading_blanks(c):
                    out.append(Chunk(known(lead), False))
                out.extend(self.chunks(c, quoted=True))
        if only_at:
            return out  # "$@" with no items is no word at all
        out.insert(0, Chunk(EMPTY, False))  # a quoted string is a word even when empty
        return out


    # ---- what the parts call back ---------------------------------------------

    def param_items(self, name: str, index: str | None, src: str) -> list[Scalar] | str | None:
        """Values of a parameter: a list (one item for a scalar), a reason if unknown,
        or None when unset."""
        return params.param_items(self, name, index, src)

    def stdin(self, command: Node) -> Scalar | None:
        """The input a command's here-document or here-string gives it; None when its
        input is anything else (the terminal, a file, a pipe)."""
        return heredoc.stdin(self, command)

    # ---- arithmetic and braces --------------------------------------------------

    def _arith_value(self, node: Node) -> Scalar:
        src = text(node)
        inner = [c for c in node.named_children]
        if not inner:
            return known("0")
        ev = Arith(self)
        value = ev.eval(inner[0])
        if value is None:
            return unknown(src, ev.reason or f"{src} cannot be computed")
        return known(str(value))

    def arith_text(self, expr: str) -> int | None:
        """Evaluate arithmetic written as text (`declare -i`, variable contents, `let`)."""
        expr = expr.strip()
        if re.fullmatch(r"-?\d+", expr):
            return int(expr)
        if not expr:
            return 0
        from rankdebug.command.syntax import parse

        tree = parse(f"_=$(({expr}))")
        root = tree.root_node
        if root.has_error:
            return None
        found = _find(root, "arithmetic_expansion")
        if found is None or not found.named_children:
            return None
        sub = Expander(self.state, Positions(f"_=$(({expr}))"))
        sub.depth = self.depth + 8
        return Arith(sub).eval(found.named_children[0])

    def _brace(self, node: Node) -> list[str]:
        nums = [text(c) for c in node.named_children]
        if len(nums) == 2 and all(re.fullmatch(r"-?\d+", n) for n in nums):
            a, b = int(nums[0]), int(nums[1])
            step = 1 if b >= a else -1
            if abs(b - a) > 10_000:
                return [text(node)]
            return [str(i) for i in range(a, b + step, step)]
        return [text(node)]


# Nodes that make one chunk: its value, and whether it is split when unquoted.
_SINGLE: dict[str, Callable[[Expander, Node], tuple[Scalar, bool]]] = {
    **dict.fromkeys(("word", "number", "extglob_pattern", "regex", "special_variable_name",
                     "variable_name"), lambda ex, n: (ex._word(n), False)),
    "raw_string": lambda ex, n: (known(text(n)[1:-1]), False),
    "ansi_c_string": lambda ex, n: (known(_ansi_c(text(n)[2:-1])), False),
    "arithmetic_expansion": lambda ex, n: (ex._arith_value(n), True),
    "command_substitution": lambda ex, n: (substitution(ex, n), True),
    "process_substitution": lambda ex, n: (
        unknown(text(n), f"{text(n)} is a process substitution"), False),
    "brace_expression": lambda ex, n: (known(" ".join(ex._brace(n))), True),
}


def _unescape_dq(s: str) -> str:
    s = s.replace("\\\n", "")
    return re.sub(r'\\([$`"\\])', r"\1", s)


def _ansi_c(s: str) -> str:
    table = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "a": "\a",
             "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "v": "\v"}
    return re.sub(r"\\(.)", lambda m: table.get(m.group(1), "\\" + m.group(1)), s)


def _find(node: Node, type_: str) -> Node | None:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == type_:
            return n
        stack.extend(reversed(n.children))
    return None

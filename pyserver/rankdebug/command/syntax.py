"""tree-sitter-bash: parsing, positions in characters, and readable syntax errors."""

from __future__ import annotations

import re
import threading

import tree_sitter_bash
from tree_sitter import Language, Node, Parser, Tree

from rankdebug.command.errors import CommandError
from rankdebug.command.words import Span

LANGUAGE = Language(tree_sitter_bash.language())
_local = threading.local()


def _parser() -> Parser:
    parser: Parser | None = getattr(_local, "parser", None)
    if parser is None:
        parser = Parser(LANGUAGE)
        _local.parser = parser
    return parser


# tree-sitter-bash 0.25.1's scanner calls C's isdigit() on the character after a `{`
# (and after `{12`, `{1..`, `{1..2`): a code point past U+00FF indexes glibc's
# 384-entry table out of bounds and kills the process about half the time (`{` then
# U+10FFFF). Such a character is swapped for as many ASCII letters as it has bytes
# while parsing (the tree's shape is the same: both are word characters), then put
# back: the tree reads its text from that same buffer, so nodes show the original.
_BRACE_THEN_WIDE = re.compile(rb"\{[0-9]*(?:\.\.[0-9]*)?(?=[\xc4-\xf4])")
_WIDTH = {**dict.fromkeys(range(0xC4, 0xE0), 2), **dict.fromkeys(range(0xE0, 0xF0), 3),
          **dict.fromkeys(range(0xF0, 0xF5), 4)}


# A backslash that continues the last line into the end of the text: bash ends the command
# there (`torchrun ... \` as a script's last line); tree-sitter-bash calls it an error. It is
# read as a blank while parsing (the tree keeps the original text, as above).
_CONTINUED_TO_END = re.compile(rb"(?<!\\)(?:\\\\)*(\\)\r?\n?\Z")


def _parse_bytes(data: bytes, old: Tree | None) -> Tree:
    parser = _parser()
    if data.endswith((b"\\", b"\\\n", b"\\\r\n")):
        window = data[-4096:]
        tail = _CONTINUED_TO_END.search(window)
        if tail is not None:
            # Not reused: the old tree read that byte as it was.
            tree = _parse_read_as(parser, data, None, len(data) - len(window) + tail.start(1))
            if not tree.root_node.has_error:
                return tree
            # Broken anyway (an array left open at the end): read as written.
    return _parse_read_as(parser, data, old, None)


def _parse_read_as(parser: Parser, data: bytes, old: Tree | None, blank: int | None) -> Tree:
    """Parse ``data`` with the swaps above (and the byte at ``blank`` read as a space)."""
    spots = [m.end() for m in _BRACE_THEN_WIDE.finditer(data)] if b"{" in data else []
    if not spots and blank is None:
        return parser.parse(data, old) if old is not None else parser.parse(data)
    buf = bytearray(data)
    for at in spots:
        buf[at:at + _WIDTH[buf[at]]] = b"x" * _WIDTH[buf[at]]
    if blank is not None:
        buf[blank] = ord(" ")
    tree = parser.parse(buf, old) if old is not None else parser.parse(buf)
    buf[:] = data  # same length: the tree keeps this buffer and slices it for node.text
    return tree


def parse(text: str) -> Tree:
    return _parse_bytes(text.encode("utf-8"), None)


def parse_incremental(data: bytes, old: Tree | None) -> Tree:
    """Parse UTF-8 `data`, reusing `old` (already edited to match) where it can."""
    return _parse_bytes(data, old)


class Positions:
    """Maps tree-sitter's byte columns to character columns, per line, lazily (a text
    that is all ASCII is not even split into lines until one is asked for)."""

    def __init__(self, text: str, first_line: int = 0) -> None:
        self._text = text
        self._split: list[str] | None = None
        self._all_ascii = text.isascii()
        self._first = first_line
        self._ascii: dict[int, bool] = {}

    @property
    def _lines(self) -> list[str]:
        if self._split is None:
            self._split = self._text.split("\n")
        return self._split

    def col(self, row: int, byte_col: int) -> int:
        if self._all_ascii or row >= len(self._lines):
            return byte_col
        ascii_line = self._ascii.get(row)
        line = self._lines[row]
        if ascii_line is None:
            ascii_line = line.isascii()
            self._ascii[row] = ascii_line
        if ascii_line:
            return byte_col
        return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))

    @property
    def first_line(self) -> int:
        return self._first

    def line_text(self, row: int) -> str:
        return self._lines[row] if 0 <= row < len(self._lines) else ""

    def span(self, node: Node) -> Span:
        s, e = node.start_point, node.end_point
        return Span(
            s.row + self._first, self.col(s.row, s.column),
            e.row + self._first, self.col(e.row, e.column),
        )

    def line_of(self, node: Node) -> int:
        return node.start_point.row + self._first


def text(node: Node) -> str:
    raw = node.text
    return raw.decode("utf-8", errors="replace") if raw is not None else ""


def glued_prefix(node: Node) -> list[Node]:
    """The assignments tree-sitter-bash reads as a command's prefix across a line end: it
    parses ``A=1 B=2⏎⏎cmd`` (two or more assignments, then a command on a later line) as one
    command, where bash runs the assignments, then ``cmd``. Empty for a real prefix
    (``A=1 cmd``, ``A=1 \\⏎cmd``)."""
    name = node.child_by_field_name("name") if node.type == "command" else None
    if name is None:
        return []
    lead = []
    for child in node.children:
        if child.start_byte >= name.start_byte:
            break
        if child.type != "variable_assignment":
            return []  # a redirection among them: as written
        lead.append(child)
    raw = node.text or b""
    gap = raw[lead[-1].end_byte - node.start_byte:name.start_byte - node.start_byte] \
        if lead else b""
    return lead if b"\n" in gap.replace(b"\\\n", b"") else []


def binary_parts(node: Node) -> tuple[Node, Node, Node] | None:
    """The left operand, the operator and the right operand of a ``binary_expression``."""
    left = node.child_by_field_name("left")
    op = node.child_by_field_name("operator")
    right = node.child_by_field_name("right")
    if left is None or op is None or right is None:
        return None
    return left, op, right


def first_error(node: Node) -> Node | None:
    """The first ERROR or MISSING node inside `node`, depth first."""
    if not node.has_error:
        return None
    stack = [node]
    while stack:
        n = stack.pop()
        if n.is_missing or n.type == "ERROR":
            return n
        stack.extend(c for c in reversed(n.children) if c.has_error or c.is_missing)
    return None


_CLOSERS = {'"': "double-quoted string", "'": "single-quoted string", "`": "backquote",
            ")": "parenthesis", "}": "brace", "]": "bracket", "]]": "test", "))": "arithmetic",
            "fi": "if", "done": "loop", "esac": "case", "then": "if", "do": "loop"}


def syntax_error(node: Node, pos: Positions) -> CommandError:
    """A CommandError describing an ERROR/MISSING node, positioned where it starts."""
    if node.is_missing:
        what = _CLOSERS.get(node.type, node.type)
        opener = node.parent
        anchor = opener if opener is not None else node
        span = pos.span(anchor)
        if node.type in ('"', "'", "`"):
            msg = f"unterminated {what}"
        else:
            msg = f"missing '{node.type}' to close this {what}"
        return CommandError(msg, span.start_line + 1, span.start_col + 1)
    if node.type == "ERROR":
        readable, broken = readable_prefix(node)
        if readable and broken is not None:  # the error is where the broken text starts
            span = pos.span(broken)
            return CommandError(broken_text(broken, pos), span.start_line + 1,
                                span.start_col + 1)
    span = pos.span(node)
    snippet = text(node).strip().split("\n", 1)[0][:40]
    if snippet.startswith(("'", '"')) and snippet.count(snippet[0]) == 1:
        return CommandError(f"unterminated {_CLOSERS[snippet[0]]}", span.start_line + 1,
                            span.start_col + 1)
    msg = f"syntax error near '{snippet}'" if snippet else "syntax error"
    return CommandError(msg, span.start_line + 1, span.start_col + 1)


# Statement nodes bash runs on their own (what the walker reads).
_STATEMENT_TYPES = frozenset({
    "command", "variable_assignment", "variable_assignments", "declaration_command",
    "unset_command", "redirected_statement", "if_statement", "for_statement",
    "c_style_for_statement", "while_statement", "case_statement", "list", "pipeline",
    "subshell", "compound_statement", "negated_command", "test_command",
    "function_definition",
})


def readable_prefix(error: Node) -> tuple[list[Node], Node | None]:
    """The statements at the start of an ERROR node that bash runs before it meets the
    broken text (an array or quote left open at the end of the file: tree-sitter then
    wraps the whole file in one ERROR), and the first node of that broken text.

    A statement on the broken text's first line is not one of them: bash reads a line
    whole before it runs any of it."""
    kids = error.children
    broken = next((c for c in kids if c.is_named and c.type != "comment" and (
        c.type not in _STATEMENT_TYPES or c.has_error or c.is_missing)), None)
    limit = broken.start_point.row if broken is not None else None
    out = [c for c in kids if c.type in _STATEMENT_TYPES
           and (broken is None or c.end_byte <= broken.start_byte)
           and (limit is None or c.end_point.row < limit)]
    return out, broken


def broken_text(node: Node, pos: Positions) -> str:
    """What is wrong where broken text starts, in a few words: the parser's own reading
    (an unterminated quote, a missing closer) or the text of its line from there."""
    inner = first_error(node)
    if inner is not None and inner.is_missing:
        return syntax_error(inner, pos).message
    line = pos.line_text(node.start_point.row)
    col = pos.col(node.start_point.row, node.start_point.column)
    snippet = line[col:].strip()[:40]
    if snippet.startswith(("'", '"')) and snippet.count(snippet[0]) == 1:
        return f"unterminated {_CLOSERS[snippet[0]]}"
    return f"syntax error near '{snippet}'" if snippet else "syntax error at the end of the file"

"""Which simple commands a line of a shell segment asks for, and when it holds none, why:
empty, a comment, assignments only, inside a here-document, or a syntax error."""

from __future__ import annotations

from tree_sitter import Node

from rankdebug.command.errors import CommandError
from rankdebug.command.source import Segment, Source
from rankdebug.command.syntax import Positions, first_error, readable_prefix, syntax_error

_OPAQUE = frozenset({"command_substitution", "process_substitution", "heredoc_body",
                     "arithmetic_expansion"})


def find_candidates(root: Node, row: int) -> list[Node]:
    """Simple commands that cover `row`, outermost first, not inside substitutions."""
    out: list[Node] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.start_point.row > row or node.end_point.row < row:
            continue
        if node.end_point.row == row and node.end_point.column == 0 and node.start_point.row < row:
            continue
        if node.type in _OPAQUE:
            continue
        if node.type == "command":
            out.append(node)
            # Commands nest only through substitutions, which are opaque.
            continue
        stack.extend(reversed(node.children))
    out.sort(key=lambda n: n.start_byte)
    return out


def check_syntax(root: Node, candidates: list[Node], pos: Positions) -> list[Node]:
    """A syntax error inside, beside or over the chosen command is the user's to fix; the
    ERROR nodes that bash reaches only after the command are returned."""
    skipped: list[Node] = []
    if not root.has_error:
        return skipped
    first = min(c.start_point.row for c in candidates)
    last = max(c.end_point.row for c in candidates)
    stack = [root]
    while stack:
        node = stack.pop()
        if not (node.has_error or node.is_missing):
            continue
        if node.end_point.row < first or node.start_point.row > last:
            continue
        if node.type == "ERROR":
            readable, _ = readable_prefix(node)
            if any(_within(c, outer) for c in candidates for outer in readable):
                skipped.append(node)  # bash runs the command before it meets the broken text
                continue
        if node.type == "ERROR" or node.is_missing:
            raise syntax_error(first_error(node) or node, pos)
        stack.extend(reversed(node.children))
    return skipped


def _within(node: Node, outer: Node) -> bool:
    return outer.start_byte <= node.start_byte and node.end_byte <= outer.end_byte


def explain_empty(root: Node, row: int, pos: Positions, seg: Segment) -> CommandError:
    line = row + seg.first_line + 1
    lines = seg.text.split("\n")
    if row >= len(lines):
        return past_end(Source([seg]), line)
    node = root.descendant_for_point_range((row, 0), (row, max(0, len(lines[row].encode()) - 1)))
    error = _syntax_error_over(root, node, row, pos)
    if error is not None:
        return error
    stripped = lines[row].strip()
    col = len(lines[row]) - len(lines[row].lstrip()) + 1
    if not stripped:
        return CommandError("this line is empty", line, 1)
    return _not_a_command(node, stripped, line, col)


def _syntax_error_over(root: Node, node: Node | None, row: int,
                       pos: Positions) -> CommandError | None:
    """The syntax error the line is inside of, when there is one."""
    err = first_error(root)
    if err is None or err.start_point.row > row:
        return None
    anc = node
    while anc is not None:
        if anc.type == "ERROR" and node is not None and any(
                _within(node, c) for c in readable_prefix(anc)[0]):
            return None  # a statement bash runs before the broken text
        if anc.type == "ERROR" or (anc.has_error and anc.type in ("string", "raw_string")):
            return syntax_error(first_error(anc) or anc, pos)
        anc = anc.parent
    return None


def _not_a_command(node: Node | None, stripped: str, line: int, col: int) -> CommandError:
    """What a line that holds no command is instead."""
    kinds = set()
    anc = node
    while anc is not None:
        kinds.add(anc.type)
        anc = anc.parent
    if "heredoc_body" in kinds:
        return CommandError("this line is inside a here-document: it is input, not a command",
                            line, col)
    if stripped.startswith("#"):
        return CommandError("this line is a comment", line, col)
    if kinds & {"variable_assignment", "declaration_command", "variable_assignments"}:
        return CommandError("this line sets variables; it runs no command", line, col)
    return CommandError("this line holds no command", line, col)


def past_end(source: Source, line: int) -> CommandError:
    """A line past the document's end, said with the line it ends at."""
    last = source.segments[-1] if source.segments else None
    count = last.first_line + last.text.count("\n") + 1 if last is not None else 0
    if last is not None and last.text.endswith("\n"):
        count -= 1  # the newline that ends the last line starts none
    return CommandError(f"the document ends at line {count}", line, 1)

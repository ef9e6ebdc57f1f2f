"""Here-documents and here-strings: the input they give a command."""

from __future__ import annotations

import re

from tree_sitter import Node

from rankdebug.command.expand.chunks import Chunk, Expansion, leading_blanks
from rankdebug.command.state import EMPTY, Scalar, known, normalize
from rankdebug.command.syntax import text
from rankdebug.command.words import Part


def stdin(ex: Expansion, command: Node) -> Scalar | None:
    """The input a command's here-document or here-string gives it; None when its
    input is anything else (the terminal, a file, a pipe)."""
    redirects = [c for c in command.children if c.type == "herestring_redirect"]
    parent = command.parent
    if parent is not None and parent.type == "redirected_statement" and (
            parent.child_by_field_name("body") == command):
        redirects += [c for c in parent.children if c.type.endswith("_redirect")]
    value: Scalar | None = None
    for r in redirects:
        if r.type == "heredoc_redirect":
            value = heredoc(ex, r)
        elif r.type == "herestring_redirect":
            words = r.named_children
            value = normalize((*ex.scalar(words[0]), Part("\n"))) if words else None
        elif r.type == "file_redirect" and text(r).lstrip("0").startswith("<"):
            value = None  # a file's contents are not read
    return value


def heredoc(ex: Expansion, redirect: Node) -> Scalar:
    """A here-document's text: expanded unless its delimiter is quoted, leading tabs
    dropped for `<<-`."""
    body = next((c for c in redirect.children if c.type == "heredoc_body"), None)
    start = next((c for c in redirect.children if c.type == "heredoc_start"), None)
    tabs = any(c.type == "<<-" for c in redirect.children)
    if body is None:
        return EMPTY
    if start is not None and any(ch in text(start) for ch in "'\"\\"):
        return known(_heredoc_tabs(text(body), tabs, True).rstrip("\t" if tabs else ""))
    out: list[Part] = []
    raw = body.text or b""
    at = body.start_byte
    line_start = True
    for child in [*body.children, None]:
        end = child.start_byte if child is not None else body.end_byte
        literal = raw[at - body.start_byte:end - body.start_byte].decode("utf-8", "replace")
        if child is not None and child.type == "heredoc_content":
            end = child.end_byte
            literal = text(child) if not literal else literal + text(child)
        if literal:
            literal = re.sub(r"\\([$`\\])", r"\1", literal.replace("\\\n", ""))
            out.append(Part(_heredoc_tabs(literal, tabs, line_start)))
            line_start = literal.endswith("\n")
        if child is not None and child.type != "heredoc_content":
            if lead := leading_blanks(child):
                out.append(Part(lead))
            for chunk in ex.chunks(child, quoted=True):
                if isinstance(chunk, Chunk):
                    out.extend(chunk.value)
            end = child.end_byte
            line_start = False
        at = end
    if tabs and out and out[-1].known:
        out[-1] = Part(out[-1].text.rstrip("\t"))  # the delimiter line's own tabs
    return normalize(tuple(out))


def _heredoc_tabs(body: str, tabs: bool, line_start: bool) -> str:
    """`<<-` drops the tabs that start each line of the here-document."""
    if not tabs:
        return body
    body = re.sub(r"\n\t+", "\n", body)
    return body.lstrip("\t") if line_start else body


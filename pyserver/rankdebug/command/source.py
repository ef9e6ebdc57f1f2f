"""Turning a document (shell script, Markdown, a bare command) into shell text segments.

Line numbers are preserved: a segment knows the document line it starts on, and
Markdown prose lines never reach the shell parser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from rankdebug.command.errors import CommandError
from rankdebug.command.plan import Diagnostic
from rankdebug.command.words import Span

Language = Literal["shell", "markdown"]

SHELL_FENCES = frozenset(
    {"", "bash", "sh", "shell", "zsh", "console", "shellscript", "shell-session",
     "sh-session", "bash-session", "terminal", "ksh", "sbatch", "slurm"}
)
MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx", ".rmd", ".qmd")
_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^\s`{]*)?")
_PROMPT = re.compile(r"^(\s*)(\$|%|\(\S+\)\s*\$|\S+@\S+[:\w~/.-]*\$) ")


@dataclass(frozen=True, slots=True)
class Segment:
    """Shell text that starts on document line `first_line` (0-based)."""

    text: str
    first_line: int


@dataclass
class Source:
    segments: list[Segment]
    diagnostics: list[Diagnostic] = field(default_factory=list)


def decode(data: bytes | str) -> tuple[str, list[Diagnostic]]:
    """Text of a document; NUL bytes are an error, bad UTF-8 and CRLF are warnings."""
    diags: list[Diagnostic] = []
    if isinstance(data, bytes):
        nul = data.find(b"\0")
        if nul >= 0:
            line = data.count(b"\n", 0, nul)
            col = nul - (data.rfind(b"\n", 0, nul) + 1)
            raise CommandError("the file holds a NUL byte: not a shell script", line + 1, col + 1)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            text = data.decode("utf-8", errors="replace")
            line = data.count(b"\n", 0, exc.start)
            col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1)
            diags.append(Diagnostic(
                "the file is not valid UTF-8; unreadable bytes were replaced",
                Span.point(line, col), "warning", "encoding"))
    else:
        text = data
        nul = text.find("\0")
        if nul >= 0:
            line = text.count("\n", 0, nul)
            col = nul - (text.rfind("\n", 0, nul) + 1)
            raise CommandError("the text holds a NUL character: not a shell script",
                               line + 1, col + 1)
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        first = text.find("\r\n")
        if first >= 0:
            line = text.count("\n", 0, first)
            diags.append(Diagnostic(
                "the file has Windows (CRLF) line endings: bash reads each \\r as part of "
                "the last word on a line",
                Span.point(line, first - (text.rfind("\n", 0, first) + 1)), "warning", "crlf"))
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text, diags


def guess_language(path: str | None, language: str | None) -> Language:
    if language in ("markdown", "md"):
        return "markdown"
    if language is not None:
        return "shell"
    if path and path.lower().endswith(MARKDOWN_SUFFIXES):
        return "markdown"
    return "shell"


def load(data: bytes | str, *, path: str | None = None, language: str | None = None) -> Source:
    text, diags = decode(data)
    if guess_language(path, language) == "markdown":
        return Source(markdown_segments(text), diags)
    return Source([Segment(text, 0)], diags)


def markdown_segments(text: str) -> list[Segment]:
    """One segment per fenced shell block; prompts stripped, output lines blanked."""
    lines = text.split("\n")
    segments: list[Segment] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info = m.group(2), (m.group(3) or "").lower().strip("{}.")
        body_start = i + 1
        j = body_start
        while j < len(lines):
            stripped = lines[j].strip()
            if stripped.startswith(fence[0] * len(fence)) and stripped.strip(fence[0]) == "":
                break
            j += 1
        if info in SHELL_FENCES:
            body = lines[body_start:j]
            segments.append(Segment("\n".join(_strip_prompts(body, info)), body_start))
        i = j + 1
    return segments


def _strip_prompts(body: list[str], info: str) -> list[str]:
    """`$ cmd` lines keep the command; in a block with prompts, other lines are output."""
    has_prompt = any(_PROMPT.match(line) for line in body)
    if not has_prompt and info not in ("console", "shell-session", "sh-session", "bash-session"):
        return body
    out: list[str] = []
    continuing = False
    for line in body:
        m = _PROMPT.match(line)
        if m:
            # Blank the prompt but keep columns, so positions still match the document.
            kept = " " * len(m.group(0)) + line[m.end():]
            out.append(kept)
            continuing = line.rstrip().endswith("\\")
        elif continuing:
            cont = re.sub(r"^(\s*)> ", lambda mm: mm.group(1) + "  ", line)
            out.append(cont)
            continuing = line.rstrip().endswith("\\")
        else:
            out.append("")
    return out

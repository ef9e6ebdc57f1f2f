"""Evaluated shell words: what is known of each argument, and where it was written."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Span:
    """A range in the document; 0-based lines and columns (LSP style), end exclusive."""

    start_line: int
    start_col: int
    end_line: int
    end_col: int

    @staticmethod
    def point(line: int, col: int) -> Span:
        return Span(line, col, line, col)


@dataclass(frozen=True, slots=True)
class Part:
    """A piece of a word: literal text, or an unknown stretch (text is then its source)."""

    text: str
    known: bool = True
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Word:
    """One argv element after expansion. Unknown parts keep the source text that made them."""

    parts: tuple[Part, ...]
    span: Span
    source: str = ""
    reason: str | None = None  # why a part is unknown, for warnings

    @staticmethod
    def literal(text: str, span: Span | None = None) -> Word:
        return Word((Part(text),), span or Span.point(0, 0), text)

    @staticmethod
    def unknown(source: str, span: Span, reason: str) -> Word:
        return Word((Part(source, known=False, reason=reason),), span, source, reason)

    @property
    def known(self) -> bool:
        return all(p.known for p in self.parts)

    @property
    def value(self) -> str | None:
        """The word's text when fully known, else None."""
        if not self.known:
            return None
        return "".join(p.text for p in self.parts)

    @property
    def known_prefix(self) -> str:
        """Leading known text, e.g. ``--nproc_per_node=`` of ``--nproc_per_node=$N``."""
        out = []
        for p in self.parts:
            if not p.known:
                break
            out.append(p.text)
        return "".join(out)

    @property
    def display(self) -> str:
        """The value if known, else the text as written (``$N``), for messages and JSON."""
        return "".join(p.text for p in self.parts)

    def suffix_after(self, n: int) -> Word:
        """The word without its first ``n`` known characters (for ``--opt=value``)."""
        parts: list[Part] = []
        skip = n
        for p in self.parts:
            if skip > 0 and p.known:
                if len(p.text) <= skip:
                    skip -= len(p.text)
                    continue
                parts.append(Part(p.text[skip:]))
                skip = 0
            else:
                parts.append(p)
        col = self.span.start_col + n if self.span.start_line == self.span.end_line else 0
        span = Span(self.span.start_line, col, self.span.end_line, self.span.end_col)
        return Word(tuple(parts) or (Part(""),), span, self.source[n:], self.reason)

"""Engine positions (0-based lines, columns in code points) to LSP ranges and back.

The client counts columns in its negotiated encoding (UTF-16 for VS Code); pygls'
``PositionCodec`` converts. Lines are split the way LSP and the engine split them
(``\\n``, ``\\r\\n`` and a lone ``\\r``), so line numbers agree.
"""

from __future__ import annotations

import re

from lsprotocol import types
from pygls.workspace import PositionCodec

from rankdebug.command.words import Span

_BREAK = re.compile(r"\r\n|\r|\n")


class Lines:
    """A document's lines, split lazily, for converting columns on the lines that need it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._lines: list[str] | None = None

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            text = self.text
            self._lines = _BREAK.split(text) if "\r" in text else text.split("\n")
        return self._lines

    def line(self, row: int) -> str:
        lines = self.lines
        return lines[row] if 0 <= row < len(lines) else ""


class Converter:
    """Spans to ranges for one document version, in the client's position encoding."""

    def __init__(self, lines: Lines, codec: PositionCodec) -> None:
        self.lines = lines
        self.codec = codec
        self._utf32 = codec.encoding == types.PositionEncodingKind.Utf32

    def position(self, row: int, col: int) -> types.Position:
        line, character = self.units(row, col)
        return types.Position(line=line, character=character)

    def units(self, row: int, col: int) -> tuple[int, int]:
        """(line, character in the client's units) of an engine position."""
        row = max(row, 0)
        col = max(col, 0)
        if self._utf32:
            return row, col
        text = self.lines.line(row)
        if text.isascii():
            return row, min(col, len(text))
        return row, self.codec.client_num_units(text[:col])

    def range(self, span: Span) -> types.Range:
        return types.Range(
            start=self.position(span.start_line, span.start_col),
            end=self.position(span.end_line, span.end_col),
        )

    def from_client(self, pos: types.Position) -> tuple[int, int]:
        """A client position as (row, column in code points)."""
        if self._utf32:
            return pos.line, pos.character
        text = self.lines.line(pos.line)
        if text.isascii():
            return pos.line, pos.character
        units = 0
        for i, ch in enumerate(text):
            if units >= pos.character:
                return pos.line, i
            units += self.codec.client_num_units(ch)
        return pos.line, len(text)


def contains(span: Span, row: int, col: int) -> bool:
    """Whether (row, col) lies in ``span`` (end inclusive, so a cursor after a word counts)."""
    if row < span.start_line or row > span.end_line:
        return False
    if row == span.start_line and col < span.start_col:
        return False
    return not (row == span.end_line and col > span.end_col)

"""Where a launch command came from: an argv, a line of a saved file, or a text (an
unsaved document, a terminal selection). It decides how ``rankdebug launch`` is told the
command: ``-- ARGV`` or ``--file F --line N``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Origin:
    argv: tuple[str, ...] | None = None
    # A saved file the launcher can read again (exports and all).
    path: str | None = None
    # The document's text when it was given (unsaved, or a selection).
    text: str | None = None

    @classmethod
    def of_argv(cls, argv: list[str] | tuple[str, ...]) -> Origin:
        return cls(argv=tuple(argv))

    @classmethod
    def of_file(cls, path: str, text: str | None = None) -> Origin:
        return cls(path=path, text=text)

    @classmethod
    def of_text(cls, text: str) -> Origin:
        return cls(text=text)

    def lines(self, start: int, end: int) -> str | None:
        """Lines ``start``..``end`` (0-based, inclusive) of the text, when it is known."""
        if self.text is None:
            return None
        lines = self.text.splitlines()
        return "\n".join(lines[start:end + 1]) if end < len(lines) else None

"""The one error type the command engine raises."""

from __future__ import annotations


class CommandError(Exception):
    """Input the engine cannot read, with a 1-based position in the document."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column

    def to_json(self) -> dict[str, object]:
        return {"error": {"message": self.message, "line": self.line, "column": self.column}}

"""The error envelope and exit codes every ``rankdebug`` verb and server command uses.

One rule for the CLI: exit status 2 is bad input (a command that cannot be read, an option
or rank spec that is wrong, a job or rank that does not exist), 1 is the job or the rank
failing (a rank that does not answer, an expression that raises). With ``--json`` the error
is one object on stdout, ``{"error": {"message": ..., "line": ..., "column": ...}}`` (line
and column 1-based, or null), plus whatever the verb adds (``pid``, ``rank``).
"""

from __future__ import annotations

import json
import sys
from typing import Any

BAD_INPUT = 2
FAILED = 1


def envelope(message: str, line: int | None = None, column: int | None = None,
             **extra: Any) -> dict[str, Any]:
    """``{"error": {...}}`` for ``message`` at a 1-based position."""
    return {"error": {"message": message, "line": line, "column": column, **extra}}


class RankdebugError(Exception):
    """A failure to report to the user: a message, where it is, and the exit status."""

    exit_code = BAD_INPUT

    def __init__(self, message: str, line: int | None = None, column: int | None = None,
                 *, exit_code: int | None = None, **extra: Any) -> None:
        super().__init__(message)
        self.message, self.line, self.column = message, line, column
        self.extra = extra
        if exit_code is not None:
            self.exit_code = exit_code

    def to_json(self) -> dict[str, Any]:
        return envelope(self.message, self.line, self.column, **self.extra)


class BadInput(RankdebugError):
    """Input that cannot be used as given (exit 2)."""


def fail(message: str, *, as_json: bool, prog: str, code: int = BAD_INPUT,
         **extra: Any) -> int:
    """Report a failure said in one message (see ``report``); its exit status."""
    return report(RankdebugError(message, exit_code=code, **extra), as_json=as_json, prog=prog)


def report(error: RankdebugError, *, as_json: bool, prog: str) -> int:
    """Print ``error`` (JSON on stdout, or a line on stderr) and return its exit status."""
    if as_json:
        print(json.dumps(error.to_json(), ensure_ascii=False), flush=True)
    else:
        where = f" (line {error.line})" if error.line is not None else ""
        print(f"{prog}: {error.message}{where}", file=sys.stderr, flush=True)
    return error.exit_code

"""The one error type the command engine raises."""

from __future__ import annotations

from rankdebug.errors import BadInput


class CommandError(BadInput):
    """Input the engine cannot read, with a 1-based position in the document."""

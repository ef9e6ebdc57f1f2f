"""``--break`` lines (``rankdebug launch --break FILE:LINE``) in a client's breakpoints: added
to its ``setBreakpoints`` of the same file until it has configured (the response cut back to
its own entries), and sent on their own for the files it said nothing of."""

from __future__ import annotations

import os
from typing import Any

from rankdebug.runtime import bound_breaks
from rankdebug.supervise.gates.side import GateSide


class CliLines:
    """The ``--break`` lines of one client session (the gate's ``cli_breaks``: real path →
    line numbers)."""

    def __init__(self, gate: GateSide) -> None:
        self.gate = gate
        self.merged = False  # the files the client said nothing of are sent
        self._told: set[str] = set()  # sources whose breakpoints went to the adapter

    def added(self, req: dict[str, Any]) -> tuple[dict[str, Any], int | None]:
        """``req`` (a ``setBreakpoints``) with this source's lines added, and how many
        entries were the client's own (None: nothing was added)."""
        args = dict(req.get("arguments") or {})
        path = (args.get("source") or {}).get("path")
        if not isinstance(path, str):
            return req, None
        self._told.add(os.path.realpath(path))
        extra = self.gate.cli_breaks.get(os.path.realpath(path))
        if not extra:
            return req, None
        bps = list(args.get("breakpoints") or [])
        args["breakpoints"] = bound_breaks.with_lines(bps, extra)
        return dict(req, arguments=args), len(bps)

    def the_rest(self) -> list[dict[str, Any]]:
        """``setBreakpoints`` requests for the files the client sent nothing for (once)."""
        self.merged = True
        return [{"type": "request", "command": "setBreakpoints", "arguments": {
                    "source": {"path": path},
                    "breakpoints": [{"line": n} for n in sorted(lines)]}}
                for path, lines in self.gate.cli_breaks.items() if path not in self._told]

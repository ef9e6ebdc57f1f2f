"""What a DAP client has said to a gate while its rank runs untraced, and what the gate
answers it with: the state that is replayed to debugpy's adapter when the rank is traced."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

# debugpy 1.8's adapter answers ``initialize`` with these (debugpy/adapter/clients.py).
CAPABILITIES: dict[str, Any] = {
    "supportsCompletionsRequest": True,
    "supportsConditionalBreakpoints": True,
    "supportsConfigurationDoneRequest": True,
    "supportsDebuggerProperties": True,
    "supportsDelayedStackTraceLoading": True,
    "supportsEvaluateForHovers": True,
    "supportsExceptionInfoRequest": True,
    "supportsExceptionOptions": True,
    "supportsFunctionBreakpoints": True,
    "supportsHitConditionalBreakpoints": True,
    "supportsLogPoints": True,
    "supportsModulesRequest": True,
    "supportsSetExpression": True,
    "supportsSetVariable": True,
    "supportsValueFormattingOptions": True,
    "supportsTerminateDebuggee": True,
    "supportsTerminateRequest": True,
    "supportsGotoTargetsRequest": True,
    "supportsClipboardContext": True,
    "supportsStepInTargetsRequest": True,
    "exceptionBreakpointFilters": [
        {"filter": "raised", "label": "Raised Exceptions", "default": False,
         "description": "Break whenever any exception is raised."},
        {"filter": "uncaught", "label": "Uncaught Exceptions", "default": True,
         "description": "Break when the process is exiting due to unhandled exception."},
        {"filter": "userUnhandled", "label": "User Uncaught Exceptions", "default": False,
         "description": "Break when exception escapes into library code."},
    ],
}

# Requests the gate records while the rank is untraced, replayed to the adapter in order.
CONFIG = ("setBreakpoints", "setFunctionBreakpoints", "setExceptionBreakpoints")
# Requests answered with an empty list while no debugger runs.
EMPTY: dict[str, dict[str, Any]] = {"modules": {"modules": [], "totalModules": 0},
                                     "loadedSources": {"sources": []}}
# Exception filters a hit-hook cannot serve: the tracer must run from the start.
TRACED_FILTERS = frozenset({"raised", "userUnhandled"})


@dataclass
class Said:
    """What the client has said so far, in the order it matters for a replay."""

    initialize: dict[str, Any] | None = None
    attach: dict[str, Any] | None = None  # set: the gate sent the client "initialized"
    attach_answered: bool = False
    config: dict[str, dict[str, Any]] = field(default_factory=dict)  # key -> request
    configured: bool = False
    pause: bool = False

    def breaks(self) -> dict[str, set[int]]:
        out: dict[str, set[int]] = {}
        for key, req in self.config.items():
            if not key.startswith("setBreakpoints:"):
                continue
            args = req.get("arguments") or {}
            path = (args.get("source") or {}).get("path")
            lines = {int(b["line"]) for b in args.get("breakpoints") or []
                     if isinstance(b, dict) and isinstance(b.get("line"), int)}
            if isinstance(path, str) and lines:
                out[os.path.realpath(path)] = lines
        return out

    def needs_tracer(self) -> bool:
        """Breakpoints a hit-hook cannot serve: function breakpoints, raised exceptions."""
        fn = self.config.get("setFunctionBreakpoints")
        if fn and (fn.get("arguments") or {}).get("breakpoints"):
            return True
        exc = self.config.get("setExceptionBreakpoints")
        filters = set((exc or {}).get("arguments", {}).get("filters") or [])
        return bool(filters & TRACED_FILTERS)

    def uncaught(self) -> bool:
        exc = self.config.get("setExceptionBreakpoints")
        if exc is None:
            return False  # as debugpy: no filter until the client sets one
        return "uncaught" in set((exc.get("arguments") or {}).get("filters") or [])

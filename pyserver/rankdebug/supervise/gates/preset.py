"""The client's breakpoints sent with the launch (``RANKDEBUG_PRESET``), so that a chosen
rank starts at once instead of waiting for its client's ``setBreakpoints`` round trips.

The editor knows every breakpoint before the job starts; it sends them with the launch as
one JSON object, DAP-shaped::

    {"breakpoints": [{"source": {"path": "/w/train.py"},
                      "breakpoints": [{"line": 21, "condition": "step == 3"}]}],
     "functionBreakpoints": [{"name": "train"}],
     "exceptionFilters": ["uncaught"]}

Each gate takes them as if its client had said them (bound ones as bound to its rank,
``bound_breaks``): the rank goes with them when it starts. The client's own word replaces
them once it has configured; what it wants beyond them makes the rank attach where it is.
"""

from __future__ import annotations

import json
from typing import Any

from rankdebug.errors import BadInput
from rankdebug.runtime import bound_breaks

ENV = "RANKDEBUG_PRESET"
# Fields a source breakpoint may carry (DAP ``SourceBreakpoint``).
_FIELDS = {"line": int, "column": int, "condition": str, "hitCondition": str,
           "logMessage": str}

Config = dict[str, dict[str, Any]]  # Said.config's shape: key -> request


def parse(text: str) -> Config:
    """The preset as requests keyed as ``Said.config`` keys them; BadInput names what is
    wrong and where."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInput(f"{ENV}: not JSON: {exc.msg}", exc.lineno, exc.colno) from None
    if not isinstance(raw, dict):
        raise BadInput(f"{ENV}: expected an object with breakpoints, functionBreakpoints "
                       "and exceptionFilters")
    config: Config = {}
    sources = raw.get("breakpoints", [])
    if not isinstance(sources, list):
        raise BadInput(f"{ENV}: breakpoints must be a list of {{source, breakpoints}}")
    for i, entry in enumerate(sources):
        path = entry.get("source", {}).get("path") if isinstance(entry, dict) and \
            isinstance(entry.get("source"), dict) else None
        bps = entry.get("breakpoints") if isinstance(entry, dict) else None
        if not isinstance(path, str) or not path or not isinstance(bps, list):
            raise BadInput(f"{ENV}: breakpoints[{i}] needs source.path and a breakpoints list")
        config[f"setBreakpoints:{path}"] = _request("setBreakpoints", {
            "source": {"path": path},
            "breakpoints": [_source_bp(bp, f"breakpoints[{i}].breakpoints[{j}]")
                            for j, bp in enumerate(bps)]})
    functions = raw.get("functionBreakpoints", [])
    if not isinstance(functions, list) or not all(
            isinstance(f, dict) and isinstance(f.get("name"), str) for f in functions):
        raise BadInput(f"{ENV}: functionBreakpoints must be a list of {{name}}")
    if functions:
        config["setFunctionBreakpoints"] = _request("setFunctionBreakpoints",
                                                    {"breakpoints": functions})
    filters = raw.get("exceptionFilters", ["uncaught"])
    if not isinstance(filters, list) or not all(isinstance(f, str) for f in filters):
        raise BadInput(f"{ENV}: exceptionFilters must be a list of filter names")
    config["setExceptionBreakpoints"] = _request("setExceptionBreakpoints",
                                                 {"filters": filters})
    return config


def _source_bp(bp: object, where: str) -> dict[str, Any]:
    if not isinstance(bp, dict) or not isinstance(bp.get("line"), int) or bp["line"] < 1:
        raise BadInput(f"{ENV}: {where} needs a line (a number from 1)")
    out: dict[str, Any] = {}
    for key, kind in _FIELDS.items():
        value = bp.get(key)
        if value is None:
            continue
        if not isinstance(value, kind) or isinstance(value, bool):
            raise BadInput(f"{ENV}: {where}.{key} must be a {kind.__name__}")
        out[key] = value
    return out


def _request(command: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "request", "command": command, "arguments": args}


def for_rank(config: Config, rank: int, local_rank: int | None) -> Config:
    """The preset as ``rank`` has it: breakpoints bound to other ranks left out."""
    out: Config = {}
    for key, req in config.items():
        if key.startswith("setBreakpoints:"):
            args, _ = bound_breaks.for_rank(req["arguments"], rank, local_rank)
            out[key] = dict(req, arguments=args)
        else:
            out[key] = req
    return out

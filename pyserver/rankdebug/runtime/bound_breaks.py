"""Breakpoints bound to ranks: a condition ``ranks SPEC`` or ``ranks SPEC and EXPR``.

VS Code's breakpoints are global (every session gets every breakpoint), so the binding
travels in the one field every DAP client lets a user edit: the condition. Each rank's gate
(``supervise.gates.gate``), or the rank itself where its debugger has no gate in front
(``pydevd_bound``), rewrites ``setBreakpoints`` before the rank's debugger sees it: a
breakpoint bound to other ranks is left out (the client is told it is unverified, and why);
one bound to this rank keeps the rest of its condition (``EXPR``) or none. SPEC is the
quick-pick's grammar (``runtime.rank_grammar``): ``1,3``, ``0-3``, ``local0``, ``all``. Any
client gets this, not only the extension.
"""

from __future__ import annotations

import re

from rankdebug.runtime import rank_grammar

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any, List, Union

    Mapping = List[Union[int, str]]

_BOUND = re.compile(r"^\s*ranks?\s+(?P<spec>[\w\-, ]+?)(?:\s+and\s+(?P<rest>.+))?\s*$", re.S)

# Mapping, per entry of the client's list: the index in the forwarded list, or why it was
# left out.


def with_lines(bps: list[Any], lines: Iterable[int]) -> list[Any]:
    """A ``setBreakpoints`` list with ``--break`` ``lines`` it lacks added at its end."""
    have = {b.get("line") for b in bps if isinstance(b, dict)}
    return [*bps, *({"line": n} for n in sorted(lines) if n not in have)]


def binding(condition: object) -> tuple[str, str | None] | None:
    """``(SPEC, rest of the condition or None)`` for a bound breakpoint, else None."""
    if not isinstance(condition, str):
        return None
    m = _BOUND.match(condition)
    if m is None:
        return None
    spec = re.sub(r"\s*,\s*", ",", m.group("spec").strip())
    if rank_grammar.problem(spec) is not None:
        return None  # not our grammar: a Python condition that starts with "ranks"
    rest = m.group("rest")
    return spec, rest.strip() if rest else None


def for_rank(args: dict[str, Any], rank: int, local_rank: int | None
             ) -> tuple[dict[str, Any], Mapping | None]:
    """``setBreakpoints`` arguments as ``rank`` sees them, and how the adapter's answer maps
    back to the client's list (None: nothing was bound, the arguments are unchanged)."""
    bps = args.get("breakpoints")
    if not isinstance(bps, list) or not any(
            isinstance(b, dict) and binding(b.get("condition")) for b in bps):
        return args, None
    kept: list[Any] = []
    mapping: Mapping = []
    for bp in bps:
        bound = binding(bp.get("condition")) if isinstance(bp, dict) else None
        if bound is None:
            mapping.append(len(kept))
            kept.append(bp)
            continue
        spec, rest = bound
        if not rank_grammar.chosen(spec, rank, local_rank):
            mapping.append(f"bound to ranks {spec}: rank {rank} ignores it")
            continue
        mine = {k: v for k, v in bp.items() if k != "condition"}
        if rest:
            mine["condition"] = rest
        mapping.append(len(kept))
        kept.append(mine)
    out = dict(args, breakpoints=kept)
    lines = args.get("lines")
    if isinstance(lines, list):
        out["lines"] = [b.get("line") for b in kept if isinstance(b, dict)]
    return out, mapping


def client_body(body: dict[str, Any], mapping: Mapping | None, client_count: int | None
                ) -> dict[str, Any]:
    """The adapter's ``setBreakpoints`` answer as the client expects it: one entry per
    breakpoint it sent (``--break`` lines added by the gate are cut off)."""
    got = list(body.get("breakpoints") or [])
    if mapping is None:
        if client_count is not None:
            got = got[:client_count]
        return dict(body, breakpoints=got)
    out: list[Any] = []
    for entry in mapping:
        if isinstance(entry, int):
            out.append(got[entry] if entry < len(got) else {"verified": False})
        else:
            out.append({"verified": False, "message": entry})
    return dict(body, breakpoints=out)

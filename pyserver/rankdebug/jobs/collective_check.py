"""Which rank skipped or added a collective: the ranks' positions in each process group
(``runtime.collectives``, read by each rank's handler) set side by side.

A rank is at ``op #N`` of a group while it waits in that group's N-th collective, else
past ``#N`` (its last one). Ranks at the same position agree; where they do not, the largest
set is taken as the norm and the others are named:
"group 0 (default_pg): rank 3 is past #5, in none of its collectives; ranks 0-2 at
all_reduce #6".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rankdebug.ranks import label


@dataclass(frozen=True)
class Position:
    op: str | None  # None: not in a collective of this group
    seq: int | None

    def text(self) -> str:
        number = f"#{self.seq}" if self.seq is not None else "#?"
        if self.op is None:
            return (f"past {number}, in none of its collectives" if self.seq
                    else "in none of its collectives yet")
        return f"at {self.op} {number}"


def _position(state: dict[str, Any], name: str) -> Position:
    current = state.get("current")
    if isinstance(current, dict) and current.get("group") == name:
        return Position(str(current.get("op")), current.get("seq"))
    group = state.get("groups", {}).get(name, {})
    return Position(None, group.get("issued"))


def check(states: dict[int, dict[str, Any]]) -> list[dict[str, Any]]:
    """Per process group whose ranks disagree: {"group", "desc", "odd": [ranks], "message",
    "positions": [{"ranks", "op", "seq"}]}. ``states``: rank -> its ``collectives``."""
    groups: dict[str, dict[str, Any]] = {}
    for rank, state in states.items():
        if not isinstance(state, dict) or "groups" not in state:
            continue
        for name, info in state["groups"].items():
            entry = groups.setdefault(name, {"desc": info.get("desc"), "at": {}})
            entry["at"][rank] = _position(state, name)
    out = []
    for name, entry in sorted(groups.items()):
        buckets: dict[Position, list[int]] = {}
        for rank, where in sorted(entry["at"].items()):
            buckets.setdefault(where, []).append(rank)
        if len(buckets) < 2:
            continue
        ordered = sorted(buckets.items(), key=lambda kv: (-len(kv[1]), kv[1][0]))
        norm_pos, norm_ranks = ordered[0]
        title = f"{name} ({entry['desc']})" if entry["desc"] else name
        odd = ordered[1:]
        parts = [f"{label(ranks)} {'is' if len(ranks) == 1 else 'are'} {pos.text()}"
                 for pos, ranks in odd]
        out.append({
            "group": name, "desc": entry["desc"],
            "odd": sorted(r for _, ranks in odd for r in ranks),
            "message": f"group {title}: " + "; ".join(parts)
                       + f"; {label(norm_ranks)} {norm_pos.text()}",
            "positions": [{"ranks": ranks, "op": pos.op, "seq": pos.seq}
                          for pos, ranks in ordered],
        })
    return out

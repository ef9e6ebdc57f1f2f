"""Which rank skipped or added a collective: the ranks' positions in each process group
(``runtime.collectives``, read by each rank's handler) set side by side.

A rank is at ``op #N`` of a group while it waits in that group's N-th collective, or while
the Flight Recorder has that collective open (issued, not done: DDP's bucket all_reduce
inside ``backward``, an async one not yet waited on), whatever its Python stack shows; else
past ``#N`` (its last one). Ranks at the same position agree; where they do not, the largest
set is taken as the norm and the others are named:
"group 0 (default_pg): rank 3 is past #5, in none of its collectives; ranks 0-2 at
all_reduce #6 (DDP bucket, from backward)". Where a rank's Flight Recorder is off, only its
Python stack was seen, and the message says that rather than "in none of its collectives".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rankdebug.ranks import label


@dataclass(frozen=True)
class Position:
    op: str | None  # None: not in a collective of this group
    seq: int | None

    def text(self, note: str | None = None) -> str:
        """``note``: who issued the collective it is at; for a rank in none, NO_RECORDER
        where its Flight Recorder is off."""
        number = f"#{self.seq}" if self.seq is not None else "#?"
        if self.op is None and note == NO_RECORDER:
            return (f"past {number}, in no collective on its Python stack" if self.seq
                    else "in no collective on its Python stack yet"
                    ) + " (its Flight Recorder is off)"
        if self.op is None:
            return (f"past {number}, in none of its collectives" if self.seq
                    else "in none of its collectives yet")
        return f"at {self.op} {number}" + (f" ({note})" if note else "")


NO_RECORDER = "no recorder"


def _position(state: dict[str, Any], name: str) -> tuple[Position, str | None]:
    """Where the rank is in group ``name``, and who issued that collective (its context; in
    none: NO_RECORDER where the rank's Flight Recorder is off)."""
    current = state.get("current")
    if isinstance(current, dict) and current.get("group") == name:
        return Position(str(current.get("op")), current.get("seq")), _text(current)
    group = state.get("groups", {}).get(name, {})
    opened = group.get("open")
    if isinstance(opened, dict) and isinstance(opened.get("op"), str):
        return Position(opened["op"], opened.get("seq")), _text(opened)  # the recorder's
    return Position(None, group.get("issued")), (
        NO_RECORDER if state.get("recorder") is False else None)


def _text(found: dict[str, Any]) -> str | None:
    context = found.get("context")
    return context if isinstance(context, str) and context else None


def check(states: dict[int, dict[str, Any]]) -> list[dict[str, Any]]:
    """Per process group whose ranks disagree: {"group", "desc", "odd": [ranks], "message",
    "positions": [{"ranks", "op", "seq", "context"}]}. ``states``: rank -> its
    ``collectives``."""
    groups: dict[str, dict[str, Any]] = {}
    for rank, state in states.items():
        if not isinstance(state, dict) or not isinstance(state.get("groups"), dict):
            continue
        for name, info in state["groups"].items():
            if not isinstance(info, dict):
                continue
            entry = groups.setdefault(name, {"desc": info.get("desc"), "at": {}, "why": {}})
            where, why = _position(state, name)
            entry["at"][rank] = where
            entry["why"].setdefault(where, why)  # the first rank's word for the position
    out = []
    for name, entry in sorted(groups.items()):
        buckets: dict[Position, list[int]] = {}
        for rank, where in sorted(entry["at"].items()):
            buckets.setdefault(where, []).append(rank)
        if len(buckets) < 2:
            continue
        ordered = sorted(buckets.items(), key=lambda kv: (-len(kv[1]), kv[1][0]))
        norm_pos, norm_ranks = ordered[0]
        why = entry["why"]
        title = f"{name} ({entry['desc']})" if entry["desc"] else name
        odd = ordered[1:]
        parts = [f"{label(ranks)} {'is' if len(ranks) == 1 else 'are'} {pos.text(why[pos])}"
                 for pos, ranks in odd]
        out.append({
            "group": name, "desc": entry["desc"],
            "odd": sorted(r for _, ranks in odd for r in ranks),
            "message": f"group {title}: " + "; ".join(parts)
                       + f"; {label(norm_ranks)} {norm_pos.text(why[norm_pos])}",
            "positions": [{"ranks": ranks, "op": pos.op, "seq": pos.seq,
                           "context": why[pos] if pos.op is not None else None}
                          for pos, ranks in ordered],
        })
    return out

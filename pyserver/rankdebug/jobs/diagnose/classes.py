"""Ranks classed by where they are (STAT's equivalence classes): the same state, the same
collective and the same place in the user's code. Waiting and stuck ranks share a class when
they are in the same function called from the same lines (``seen.place``), ranks blocked
all along also at the same line in the same call; running ranks
when they run in the same loop (``seen.anchor``); raised ranks by their exception and line.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from rankdebug.jobs.diagnose.seen import Seen, call_path, frame_json, function_name, place
from rankdebug.pyspy import Frame


@dataclass
class Class:
    members: list[Seen]
    lead: Seen | None = None  # whose place and frames stand for the class (else the first)

    @property
    def first(self) -> Seen:
        return self.lead or self.members[0]

    @property
    def state(self) -> str:
        return self.first.state

    @property
    def ranks(self) -> list[int]:
        return sorted(s.rank for s in self.members if s.rank is not None)

    @property
    def collective(self) -> dict[str, Any] | None:
        return self.first.collective

    @property
    def where(self) -> Frame | None:
        return self.first.where

    def to_json(self) -> dict[str, Any]:
        c = self.collective
        return {"event": "class", "ranks": self.ranks, "state": self.state,
                "collective": {"op": c.get("op"), "seq": c.get("seq"), "group": c.get("group")}
                if c else None,
                "where": frame_json(self.where),
                "frames": [frame_json(f) for f in self.first.frames]}


def key(seen: Seen) -> Hashable:
    c = seen.collective
    coll = (c.get("op"), c.get("seq"), c.get("group")) if c else None
    if seen.state == "stuck" and seen.firm and seen.frames:
        # Blocked all along: the very line and the call it blocks in (a rank asleep at one
        # line of a loop is not one blocked in ``backward`` at the next).
        at = seen.where.line if seen.where else None
        return (seen.state, coll, place(seen.frames), at, seen.frames[0].file,
                function_name(seen.frames[0]))
    if seen.state in ("waiting", "stuck"):
        return (seen.state, coll, place(seen.frames))
    if seen.state == "running":
        return (seen.state, None, call_path(seen.frames, seen.where))
    if seen.state == "raised":
        r = seen.raised or {}
        return (seen.state, None, (r.get("exception"), r.get("file"), r.get("line")))
    return (seen.state, None, ())


def classes(seen: list[Seen]) -> list[Class]:
    """Largest first, then by lowest rank. Running ranks whose loop is inside another class's
    loop (caught in ``train_step`` in every read, where the others showed ``train``) join
    that class: they run the same loop."""
    found: dict[Hashable, Class] = {}
    for s in sorted(seen, key=lambda s: (s.rank is None, s.rank or 0)):
        found.setdefault(key(s), Class([])).members.append(s)
    running = sorted((k for k in found if isinstance(k, tuple) and k[0] == "running"),
                     key=lambda k: len(k[2]))
    for i, inner in enumerate(running):
        outer = next((k for k in running[:i] if k in found and inner[2][:len(k[2])] == k[2]),
                     None)
        if outer is not None:
            found[outer].lead = found[outer].first
            found[outer].members += found.pop(inner).members
            found[outer].members.sort(key=lambda s: (s.rank is None, s.rank or 0))
    return sorted(found.values(), key=lambda c: (-len(c.members), min(c.ranks or [1 << 30])))

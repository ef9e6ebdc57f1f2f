"""``--ranks``: which ranks get a debugger (``all``, lists, ranges, ``local0``; see design.md)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rankdebug.command.plan import RankInfo

_ITEM = re.compile(r"^(?:all|local\d+|\d+|\d+-\d+)$")


class RanksError(ValueError):
    """A ``--ranks`` value that is malformed or names ranks the job does not have."""


@dataclass(frozen=True)
class Selection:
    """The chosen ranks: ``spec`` for the bootstrap, ``ranks`` when the job's size is known."""

    spec: str
    ranks: list[int] | None

    def __str__(self) -> str:
        return ",".join(map(str, self.ranks)) if self.ranks is not None else self.spec


def select(spec: str, ranks: Sequence[RankInfo], world_size: int | None = None) -> Selection:
    """Check ``spec`` against the job's ranks and resolve it to a list when the ranks are known.

    ``ranks`` is the launch plan's rank list (empty when unknown); ``world_size`` bounds
    explicit numbers when the list is empty but the size is known.
    """
    items = [p.strip().lower() for p in spec.split(",") if p.strip()]
    if not items:
        raise RanksError("--ranks is empty; give e.g. 0, 1,3, 0-3, all or local0")
    for item in items:
        if not _ITEM.match(item):
            raise RanksError(f"--ranks: cannot read {item!r} (use N, A-B, all or localN)")
        if "-" in item:
            lo, hi = (int(x) for x in item.split("-"))
            if lo > hi:
                raise RanksError(f"--ranks: empty range {item!r}")
    world = len(ranks) if ranks else world_size
    canonical = ",".join(items)
    if not ranks:
        if world is not None:
            for r in _explicit(items):
                if r >= world:
                    raise RanksError(f"--ranks: rank {r} is outside the job (world size {world})")
            if all(i != "all" and not i.startswith("local") for i in items):
                return Selection(canonical, sorted(set(_explicit(items))))
            if items == ["all"] or "all" in items:
                return Selection(canonical, list(range(world)))
        elif all(i != "all" and not i.startswith("local") for i in items):
            return Selection(canonical, sorted(set(_explicit(items))))
        return Selection(canonical, None)
    chosen: set[int] = set()
    known_local = all(info.local_rank is not None for info in ranks)
    for item in items:
        if item == "all":
            chosen.update(info.rank for info in ranks)
        elif item.startswith("local"):
            if not known_local:
                return Selection(canonical, None)  # the rank decides from LOCAL_RANK
            want = int(item[5:])
            hits = [info.rank for info in ranks if info.local_rank == want]
            if not hits:
                raise RanksError(f"--ranks: no rank has local rank {want}")
            chosen.update(hits)
        else:
            for r in _explicit([item]):
                if r >= len(ranks):
                    raise RanksError(
                        f"--ranks: rank {r} is outside the job (world size {len(ranks)})"
                    )
                chosen.add(r)
    ordered = sorted(chosen)
    return Selection(",".join(map(str, ordered)), ordered)


def _explicit(items: Sequence[str]) -> list[int]:
    out: list[int] = []
    for item in items:
        if item == "all" or item.startswith("local"):
            continue
        if "-" in item:
            lo, hi = (int(x) for x in item.split("-"))
            out.extend(range(lo, hi + 1))
        else:
            out.append(int(item))
    return out

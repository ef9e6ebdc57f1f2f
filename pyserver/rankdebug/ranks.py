"""Which ranks: the rank-spec grammar (``all``, ``N``, ``A-B``, ``localN``, ``nodeN``,
comma-joined) and the quick-pick's choice (a spec and/or the word ``arm``).

``nodeN`` (also typed ``node N``) is every rank of node N; it needs the job's ranks known and
is resolved to rank numbers before any rank sees the spec.

Every layer reads a spec through here; the rank's bootstrap keeps a stdlib copy of
:func:`chosen` (``runtime.bootstrap.rank_chosen``), tested against the same cases.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from rankdebug.errors import BadInput

DEFAULT = "0"
_ITEM = re.compile(r"^(?:all|local\d+|node\d+|\d+|\d+-\d+)$", re.ASCII)
# Bounds checked before anything is converted or allocated: a spec names ranks by what it
# says, so "0-1000000000" or 5,000 digits is an error at its place, never a list.
MAX_RANK = (1 << 20) - 1  # above any job that runs today (1,048,576 ranks)
MAX_DIGITS = len(str(MAX_RANK))
MAX_SPEC = 1 << 16  # characters; a compacted list of every rank of a big job fits
_NODE_WORD = re.compile(r"\bnode\s+(?=\d)", re.IGNORECASE)
_ARM = re.compile(r"^(?:--)?arm(?:ed)?$", re.IGNORECASE)
EXAMPLES = "0, 1,3, 0-3, all, local0 or node1"


class RanksError(BadInput):
    """A rank spec that is malformed or names ranks the job does not have."""


class RankLike(Protocol):
    @property
    def rank(self) -> int: ...

    @property
    def local_rank(self) -> int | None: ...


@dataclass(frozen=True)
class Selection:
    """The chosen ranks: ``spec`` for the bootstrap, ``ranks`` when the job's size is known
    (None when only each rank can tell, e.g. ``local0`` with unknown local ranks)."""

    spec: str
    ranks: list[int] | None

    def __str__(self) -> str:
        return ",".join(map(str, self.ranks)) if self.ranks is not None else self.spec


@dataclass(frozen=True)
class Choice:
    """What the quick-pick answers: ranks debugged from the start ('' for none) and whether
    every rank is armed."""

    spec: str
    arm: bool


def _short(item: str) -> str:
    return repr(item if len(item) <= 40 else item[:37] + "...")


def items(spec: str) -> list[str]:
    """The spec's items, lower-cased; raises RanksError (with the 1-based column of the item
    at fault) when one is malformed or names a rank past ``MAX_RANK``."""
    if len(spec) > MAX_SPEC:
        raise RanksError(f"--ranks: the spec is {len(spec):,} characters long (at most "
                         f"{MAX_SPEC:,}); use ranges such as 0-1023", 1, MAX_SPEC + 1)
    out: list[str] = []
    column = 1
    for raw in spec.split(","):
        item = raw.strip().lower()
        at = column + len(raw) - len(raw.lstrip())
        column += len(raw) + 1
        if not item:
            continue
        if not _ITEM.match(item):
            raise RanksError(f"--ranks: cannot read {_short(item)} (use N, A-B, all, localN "
                             "or nodeN)", 1, at)
        for number in re.findall(r"\d+", item, re.ASCII):
            if len(number.lstrip("0")) > MAX_DIGITS or int(number) > MAX_RANK:
                raise RanksError(f"--ranks: {_short(number)} in {_short(item)} is past the "
                                 f"largest rank there can be ({MAX_RANK:,})", 1, at)
        if "-" in item:
            lo, hi = (int(x) for x in item.split("-"))
            if lo > hi:
                raise RanksError(f"--ranks: empty range {item!r}", 1, at)
        out.append(item)
    if not out:
        raise RanksError(f"--ranks is empty; give e.g. {EXAMPLES}")
    return out


def normalise(raw: object, default: str = DEFAULT) -> str:
    """A spec from what a client sent: a string, a rank number or a list of numbers."""
    if raw is None:
        return default
    if isinstance(raw, bool):
        raise RanksError("ranks must be a string like '1,3' or a list of numbers")
    if isinstance(raw, int):
        return str(raw)
    if isinstance(raw, str) and raw.strip():
        return raw.strip()
    if isinstance(raw, list) and raw and all(
        isinstance(r, int) and not isinstance(r, bool) and 0 <= r <= MAX_RANK for r in raw
    ):
        return compact(raw)
    if isinstance(raw, list) and any(isinstance(r, int) and r > MAX_RANK for r in raw):
        raise RanksError(f"ranks: a rank past the largest there can be ({MAX_RANK:,})")
    raise RanksError("ranks must be a string like '1,3' or a list of numbers")


def parse_choice(text: str, *, allow_arm: bool = True) -> Choice:
    """A typed or remembered choice: a spec, ``arm``, or both (``1,3 arm``, ``1,3+arm``)."""
    arm = False
    rest: list[str] = []
    for word in re.split(r"[\s+]+", _NODE_WORD.sub("node", text.strip())):
        if _ARM.match(word):
            arm = True
        elif word:
            rest.append(word)
    if arm and not allow_arm:
        raise RanksError(f"give ranks like {EXAMPLES}")
    spec = re.sub(r"\s*([,-])\s*", r"\1", " ".join(rest)).rstrip(",")
    if not spec:
        if arm:
            return Choice("", True)
        raise RanksError(f"give ranks like {EXAMPLES}")
    return Choice(",".join(items(spec)), arm)


def _spans(parts: Sequence[str]) -> list[tuple[int, int]]:
    """The numbered items of a checked spec as merged inclusive ranges, so that a spec
    costs what it says, not what it names."""
    spans: list[tuple[int, int]] = []
    for item in parts:
        if item == "all" or item.startswith(("local", "node")):
            continue
        first, _, last = item.partition("-")
        spans.append((int(first), int(last or first)))
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(spans):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return merged


def _explicit(parts: Sequence[str]) -> list[int]:
    """The ranks named by number, each once, in order (at most ``MAX_RANK + 1``)."""
    return [r for lo, hi in _spans(parts) for r in range(lo, hi + 1)]


def _largest(parts: Sequence[str]) -> int | None:
    spans = _spans(parts)
    return spans[-1][1] if spans else None


def numbers(item: str) -> list[int]:
    """The ranks an item of a well-formed spec names by number (none for ``all``, ``localN``
    and ``nodeN``)."""
    return _explicit([item])


def compact(ranks: Sequence[int]) -> str:
    """Rank numbers as the shortest spec: ``[0, 1, 2, 4]`` → ``0-2,4``."""
    known = sorted(set(ranks))
    parts = []
    i = 0
    while i < len(known):
        j = i
        while j + 1 < len(known) and known[j + 1] == known[j] + 1:
            j += 1
        parts.append(str(known[i]) if i == j else f"{known[i]}-{known[j]}")
        i = j + 1
    return ",".join(parts)


def label(ranks: Sequence[int]) -> str:
    """``rank 3`` / ``ranks 0-2,4``."""
    return ("ranks " if len(set(ranks)) > 1 else "rank ") + compact(ranks)


def _numbers_only(parts: Sequence[str]) -> bool:
    return all(i != "all" and not i.startswith(("local", "node")) for i in parts)


def _select_unknown(parts: list[str], world: int | None) -> Selection:
    """``parts`` against a job whose rank list is unknown (its size may be known)."""
    canonical = ",".join(parts)
    node = next((p for p in parts if p.startswith("node")), None)
    if node is not None:
        raise RanksError(f"--ranks: {node} needs the job's nodes, which are not known here; "
                         "give rank numbers")
    if world is not None:
        top = _largest(parts)
        if top is not None and top >= world:
            raise RanksError(f"--ranks: rank {top} is outside the job (world size {world})")
        if "all" in parts:
            return Selection(canonical, list(range(world)))
    if _numbers_only(parts):
        return Selection(canonical, sorted(set(_explicit(parts))))
    return Selection(canonical, None)


def select(spec: str, ranks: Sequence[RankLike], world_size: int | None = None) -> Selection:
    """Check ``spec`` against the job's ranks and resolve it to a list when they are known.

    ``ranks`` is the launch plan's rank list (empty when unknown); ``world_size`` bounds
    explicit numbers when the list is empty but the size is known.
    """
    parts = items(spec)
    if not ranks:
        return _select_unknown(parts, world_size)
    if any(p.startswith("local") for p in parts) and any(r.local_rank is None for r in ranks):
        return Selection(",".join(parts), None)  # each rank decides from LOCAL_RANK
    top = _largest(parts)
    if top is not None and top >= len(ranks):
        raise RanksError(f"--ranks: rank {top} is outside the job (world size {len(ranks)})")
    picked: set[int] = set()
    for item in parts:
        if item.startswith("node"):
            node = int(item[4:])
            if any(getattr(r, "node_rank", None) is None for r in ranks):
                raise RanksError(f"--ranks: {item} needs the job's nodes, which are not known "
                                 "here; give rank numbers")
            on_node = [r.rank for r in ranks if getattr(r, "node_rank", None) == node]
            if not on_node:
                raise RanksError(f"--ranks: the job has no node {node}")
            picked.update(on_node)
            continue
        if item.startswith("local"):
            want = int(item[5:])
            hits = [r.rank for r in ranks if r.local_rank == want]
            if not hits:
                raise RanksError(f"--ranks: no rank has local rank {want}")
            picked.update(hits)
            continue
        for r in range(len(ranks)) if item == "all" else _explicit([item]):
            if r >= len(ranks):
                raise RanksError(f"--ranks: rank {r} is outside the job (world size {len(ranks)})")
            picked.add(ranks[r].rank if item == "all" else r)
    ordered = sorted(picked)
    return Selection(",".join(map(str, ordered)), ordered)


def chosen(spec: str, rank: int, local_rank: int | None) -> bool:
    """Whether ``rank`` (with ``local_rank``) is picked by a well-formed ``spec``."""
    for item in items(spec):
        if item == "all":
            return True
        if item.startswith("node"):
            continue  # resolved to rank numbers before a rank reads the spec
        if item.startswith("local"):
            if local_rank == int(item[5:]):
                return True
        else:
            lo, _, hi = item.partition("-")
            if int(lo) <= rank <= int(hi or lo):
                return True
    return False

"""Compare within a parallel dimension (``rankdebug eval … --per DIM``): the ranks are split
into sets that share DIM's value (``--per dp``: the tensor-parallel shards of each
data-parallel replica; ``--per tp,pp``: the data-parallel replicas of each shard), and each
set is compared on its own. Shards of one tensor legitimately differ; replicas of one shard
should not, so comparing all ranks at once would flag every shard as "different"."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from rankdebug.errors import BadInput

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,39}")  # as a selector names a dimension


def parse(text: str) -> list[str]:
    """``tp`` or ``tp,pp`` → the dimensions, in order, once each; BadInput otherwise."""
    dims = [d.strip() for d in text.split(",")]
    for i, dim in enumerate(dims):
        if not _NAME.fullmatch(dim):
            column = len(",".join(dims[:i])) + (1 if i else 0) + 1
            raise BadInput(f"--per: {dim!r} is no dimension name (column {column}): give "
                           "one or more, comma-separated, as in --per tp or --per tp,pp")
    if len(set(dims)) != len(dims):
        raise BadInput(f"--per: a dimension is named twice in {text!r}")
    return dims


def split(ranks: Sequence[int], coords: Mapping[int, Mapping[str, int] | None],
          dims: Sequence[str]) -> list[tuple[dict[str, int], list[int]]]:
    """The ranks in sets sharing ``dims``' values, in the order of those values; BadInput
    naming a rank whose coordinates lack one (or that has none)."""
    sets: dict[tuple[int, ...], list[int]] = {}
    for rank in sorted(ranks):
        where = coords.get(rank)
        if not where:
            raise BadInput(f"--per {','.join(dims)}: rank {rank}'s parallel coordinates are "
                           "not known (the job has not reported a layout: rankdebug jobs "
                           "shows each rank's)")
        lacking = [d for d in dims if d not in where]
        if lacking:
            raise BadInput(f"--per: rank {rank} has no dimension {lacking[0]!r} (its "
                           f"coordinates: {', '.join(where)})")
        sets.setdefault(tuple(where[d] for d in dims), []).append(rank)
    return [(dict(zip(dims, key, strict=True)), members) for key, members in sorted(sets.items())]

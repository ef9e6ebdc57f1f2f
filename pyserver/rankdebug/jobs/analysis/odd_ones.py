"""Which ranks are the odd ones out, from a few reads of every rank's stacks a moment apart.

One read cannot tell a stuck rank from a healthy one that is merely elsewhere in a running
loop. A rank is flagged when, in every read, its main thread is apart from the largest set
of ranks sharing a stack (a set of at least two) and, across the reads, either it stayed
where it was or the others did (it is stuck while they move, or they wait for it). With one
read, every rank apart from the largest set is flagged; once no rank has been apart in every
read so far (``settled``), more reads cannot flag one.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

Read = dict[int, Hashable]  # rank -> its main thread's stack (any comparable key)


def _majority(read: Read) -> Hashable | None:
    sizes: dict[Hashable, list[int]] = {}
    for rank, key in sorted(read.items()):
        sizes.setdefault(key, []).append(rank)
    if not sizes:
        return None
    key, ranks = min(sizes.items(), key=lambda kv: (-len(kv[1]), kv[1][0]))
    return key if len(ranks) >= 2 or len(read) == 1 else None


def odd_ranks(reads: Sequence[Read]) -> set[int]:
    if not reads:
        return set()
    majorities = [_majority(read) for read in reads]
    ranks = set.intersection(*(set(read) for read in reads))
    flagged = set()
    for rank in ranks:
        keys = [read[rank] for read in reads]
        apart = all(m is not None and key != m for key, m in zip(keys, majorities, strict=True))
        if not apart:
            continue
        if len(reads) == 1 or len(set(keys)) == 1 or len(set(majorities)) == 1:
            flagged.add(rank)
    return flagged


def settled(reads: Sequence[Read]) -> bool:
    """Whether more reads cannot flag any rank: none was apart from the largest set in every
    read so far (a rank is flagged only when it is apart in all of them)."""
    if not reads:
        return False
    majorities = [_majority(read) for read in reads]
    ranks = set.intersection(*(set(read) for read in reads))
    return not any(all(m is not None and read[rank] != m
                       for read, m in zip(reads, majorities, strict=True)) for rank in ranks)

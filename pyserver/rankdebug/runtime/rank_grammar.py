"""The rank spec's grammar, where a rank can read it too: ``all``, ``N``, ``A-B``, ``localN``,
``nodeN``, comma-joined. ``rankdebug.ranks`` words its errors from ``problem``; a rank reads
a breakpoint's binding with it (``bound_breaks``). Pure Python, 3.9 and later."""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional, Tuple

ITEM = re.compile(r"^(?:all|local\d+|node\d+|\d+|\d+-\d+)$", re.ASCII)
# Bounds checked before anything is converted or allocated: a spec names ranks by what it
# says, so "0-1000000000" or 5,000 digits is an error at its place, never a list.
MAX_RANK = (1 << 20) - 1  # above any job that runs today (1,048,576 ranks)
MAX_DIGITS = len(str(MAX_RANK))
MAX_SPEC = 1 << 16  # characters; a compacted list of every rank of a big job fits


def problem(spec: str) -> Optional[Tuple[str, str, int]]:
    """The first fault of ``spec`` as ``(kind, text, column)``, None when it is well formed.
    kind: ``long`` (past MAX_SPEC), ``item`` (not of the grammar), ``past`` (text: a number
    past MAX_RANK), ``range`` (A > B), ``empty`` (no item at all)."""
    if len(spec) > MAX_SPEC:
        return "long", spec, MAX_SPEC + 1
    column, seen = 1, False
    for raw in spec.split(","):
        item = raw.strip().lower()
        at = column + len(raw) - len(raw.lstrip())
        column += len(raw) + 1
        if not item:
            continue
        if not ITEM.match(item):
            return "item", item, at
        for number in re.findall(r"\d+", item, re.ASCII):
            if len(number.lstrip("0")) > MAX_DIGITS or int(number) > MAX_RANK:
                return "past", number, at
        if "-" in item:
            lo, hi = (int(x) for x in item.split("-"))
            if lo > hi:
                return "range", item, at
        seen = True
    return None if seen else ("empty", spec, 1)


def chosen(spec: str, rank: int, local_rank: Optional[int]) -> bool:
    """Whether ``rank`` (with ``local_rank``) is picked by a well-formed ``spec``."""
    for raw in spec.split(","):
        item = raw.strip().lower()
        if not item or item.startswith("node"):
            continue  # node items are resolved to rank numbers before a rank reads a spec
        if item == "all":
            return True
        if item.startswith("local"):
            if local_rank == int(item[5:]):
                return True
            continue
        lo, _, hi = item.partition("-")
        if int(lo) <= rank <= int(hi or lo):
            return True
    return False

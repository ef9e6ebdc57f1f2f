"""Compare one value across ranks: group the ranks by equal value, the largest group first,
and say where a tensor of an odd group differs from the largest group's, down to elements.

Tensors and arrays are compared by their checksums (``runtime.summary``), bitwise; with a
tolerance T, a group whose tensor is within T of the largest group's, element by element,
joins it. Neither needs the data moved: :func:`narrow` asks both ranks for checksums of
chunks of the differing ranges, round after round, until single elements are compared
(``ask`` reaches a rank; the rank keeps a snapshot of its value meanwhile). Numbers with a
tolerance are close when within T; everything else is compared by its text.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

# Ranges followed per round: the first and last halves are kept, so the first and last
# differing elements are always found; closeness in between is then judged from the chunks.
BUDGET = 16
MAX_ROUNDS = 12

Ask = Callable[[int, list[list[int]]], list[dict[str, Any]]]


@dataclass
class Diff:
    """Where two ranks' tensors differ: flat indices of the first and last differing element,
    whether every differing element is within the tolerance, and whether every chunk was
    followed down to its elements (else closeness was judged from chunk minima and maxima)."""

    first: int | None = None
    last: int | None = None
    close: bool = True
    exact: bool = True


def _far_values(x: float | str, y: float | str, tolerance: float) -> bool:
    if isinstance(x, str) or isinstance(y, str):
        return x != y  # nan, inf: only the same word is close
    return abs(x - y) > tolerance


def _far_chunks(a: dict[str, Any], b: dict[str, Any], tolerance: float) -> bool:
    """Chunks that must hold an element more than ``tolerance`` apart: other NaN or Inf
    counts, or a minimum or maximum further apart than that."""
    if a["nan"] != b["nan"] or a["inf"] != b["inf"]:
        return True
    for key in ("min", "max"):
        x, y = a[key], b[key]
        if (x is None) != (y is None) or (x is not None and abs(x - y) > tolerance):
            return True
    return False


def _leaf(diff: Diff, a: dict[str, Any], b: dict[str, Any], tolerance: float | None) -> None:
    """Compare one range's elements: the first/last differing index, and closeness."""
    for offset, (x, y) in enumerate(zip(a["values"], b["values"], strict=True)):
        if x != y:
            index = a["a"] + offset
            diff.first = index if diff.first is None else min(diff.first, index)
            diff.last = index if diff.last is None else max(diff.last, index)
        if tolerance is not None and _far_values(x, y, tolerance):
            diff.close = False


def narrow(ask: Ask, ref: int, other: int, numel: int, tolerance: float | None) -> Diff:
    """How rank ``other``'s kept tensor differs from rank ``ref``'s (same element count)."""
    diff = Diff()
    frontier = [[0, numel]]
    rounds = 0
    while frontier and rounds < MAX_ROUNDS:
        rounds += 1
        mine, theirs = ask(ref, frontier), ask(other, frontier)
        following: list[list[int]] = []
        for a, b in zip(mine, theirs, strict=True):
            if "values" in a:
                _leaf(diff, a, b, tolerance)
                continue
            for ca, cb in zip(a["chunks"], b["chunks"], strict=True):
                if ca["h"] == cb["h"]:
                    continue
                if tolerance is not None and _far_chunks(ca, cb, tolerance):
                    diff.close = False
                following.append([ca["a"], ca["b"]])
        if len(following) > BUDGET:
            diff.exact = False
            following = following[:BUDGET // 2] + following[-(BUDGET // 2):]
        frontier = following
    if frontier:
        diff.exact = False
    if tolerance is None:
        diff.close = diff.first is None
    return diff


@dataclass
class Group:
    ranks: list[int]
    text: str
    summary: dict[str, Any] | None = None
    number: float | None = None
    differs: dict[str, Any] | None = field(default=None)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ranks": self.ranks, "text": self.text}
        if self.summary is not None:
            out["checksum"] = self.summary.get("checksum")
        if self.differs is not None:
            out["differs"] = self.differs
        return out


def _key(result: dict[str, Any]) -> Any:
    summary = result.get("summary")
    if isinstance(summary, dict) and summary.get("checksum"):
        return ("tensor", tuple(summary["shape"]), summary["dtype"], summary["checksum"])
    return ("text", result.get("type"), result.get("text"))


def _number(result: dict[str, Any]) -> float | None:
    value = result.get("number")
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):  # "nan", "inf", "-inf"
        return float(value)
    return None


def _close_numbers(x: float, y: float, tolerance: float) -> bool:
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    return x == y or abs(x - y) <= tolerance


def unravel(index: int, shape: Sequence[int]) -> list[int]:
    """A flat (row-major) index as one index per dimension."""
    out = []
    for size in reversed(shape):
        out.append(index % size if size else 0)
        index = index // size if size else 0
    return out[::-1]


def _same_layout(a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool:
    return (a is not None and b is not None and a.get("shape") == b.get("shape")
            and a.get("dtype") == b.get("dtype"))


def _group_exact(results: list[dict[str, Any]]) -> list[Group]:
    groups: dict[Any, Group] = {}
    for result in results:
        key = _key(result)
        group = groups.get(key)
        if group is None:
            groups[key] = Group([], str(result.get("text", "")), result.get("summary"),
                                _number(result))
            group = groups[key]
        group.ranks.append(int(result["rank"]))
    return _ordered(list(groups.values()))


def _ordered(groups: list[Group]) -> list[Group]:
    return sorted(groups, key=lambda g: (-len(g.ranks), min(g.ranks)))


def _merge_numbers(groups: list[Group], tolerance: float) -> list[Group]:
    merged: list[Group] = []
    for group in groups:  # largest first: the big group absorbs the close ones
        home = next((m for m in merged if m.number is not None and group.number is not None
                     and _close_numbers(m.number, group.number, tolerance)), None)
        if home is None:
            merged.append(group)
        else:
            home.ranks = sorted(home.ranks + group.ranks)
    return _ordered(merged)


def group(results: list[dict[str, Any]], tolerance: float | None = None,
          ask: Ask | None = None) -> list[Group]:
    """Ranks grouped by equal value (``results``: the ranks' ``result`` replies), the
    largest group first; with ``ask``, tensors are narrowed down and, with ``tolerance``,
    tensors close to the largest group's join it."""
    groups = _group_exact(results)
    if tolerance is not None:
        groups = _merge_numbers(groups, tolerance)
    if len(groups) < 2 or ask is None:
        return groups
    answers: dict[tuple[int, str], list[dict[str, Any]]] = {}

    def cached(rank: int, ranges: list[list[int]]) -> list[dict[str, Any]]:
        """The largest group's rank is asked the same ranges for every odd group: once."""
        key = (rank, repr(ranges))
        if key not in answers:
            answers[key] = ask(rank, ranges)
        return answers[key]

    big = groups[0]
    kept = [big]
    for odd in groups[1:]:
        if not _same_layout(big.summary, odd.summary):
            kept.append(odd)
            continue
        assert big.summary is not None
        diff = narrow(cached, min(big.ranks), min(odd.ranks), int(big.summary["numel"]),
                      tolerance)
        if tolerance is not None and diff.close:
            big.ranks = sorted(big.ranks + odd.ranks)
            continue
        odd.differs = {"from": min(big.ranks), "first": diff.first, "last": diff.last,
                       "at": unravel(diff.first, big.summary["shape"])
                       if diff.first is not None else None,
                       "exact": diff.exact}
        kept.append(odd)
    return _ordered(kept)

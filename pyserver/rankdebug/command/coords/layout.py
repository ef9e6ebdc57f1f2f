"""A parallel layout: named dimensions over a job's ranks, and each rank's coordinates.

Every framework we read lays its ranks out as a row-major grid (Megatron's ``RankGenerator``,
torchtitan's ``init_device_mesh``/``_unflatten``, DeepSpeed's ``ProcessTopology``, verl's
rollout mesh): rank r's index along a dimension is ``r // stride % size``. Dimensions that
are a view of others (torchtitan's ``dp`` = dp_replicate × dp_shard, Megatron's expert ``ep``
on its own grid) are more axes with their own stride, so one rule reads every dimension.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

# Dimensions a framework has only when they are used (Megatron's cp, torchtitan's
# dp_replicate, verl's infer_pp): at size 1 they are left out of the coordinates.
OPTIONAL = frozenset({"cp", "ep", "etp", "dp_replicate", "infer_pp"})


@dataclass(frozen=True)
class Axis:
    """One dimension: index of rank r is ``r // stride % size``."""

    name: str
    size: int
    stride: int


@dataclass(frozen=True)
class Read:
    """One value the layout was read from: a flag or key, its value, and where it was
    written (``file`` None for the command's own document; ``line`` 1-based)."""

    name: str
    value: str
    file: str | None = None
    line: int | None = None
    column: int | None = None

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "value": self.value, "file": self.file, "line": self.line,
                "column": self.column}


@dataclass(frozen=True)
class Layout:
    """The job's dimensions: ``axes`` (every dimension), ``order`` (the grid's own
    dimensions, fastest-varying first, as Megatron writes its order), the world it spans,
    and what it was read from."""

    axes: tuple[Axis, ...]
    order: tuple[str, ...]
    world: int
    source: str
    read: tuple[Read, ...] = ()

    @staticmethod
    def grid(order: Sequence[tuple[str, int]], world: int, source: str,
             read: Sequence[Read] = (), views: Sequence[Axis] = ()) -> Layout:
        """A row-major grid with ``order`` (name, size) fastest first, plus ``views``.
        An ``OPTIONAL`` dimension of size 1 stays in the order but is not named."""
        axes = []
        stride = 1
        for name, size in order:
            if size > 1 or name not in OPTIONAL:
                axes.append(Axis(name, size, stride))
            stride *= size
        return Layout((*axes, *views), tuple(n for n, _ in order), world, source, tuple(read))

    @property
    def sizes(self) -> dict[str, int]:
        return {a.name: a.size for a in self.axes}

    def coords_of(self, rank: int) -> dict[str, int]:
        """Rank ``rank``'s index along every dimension."""
        return {a.name: rank // a.stride % a.size for a in self.axes}

    def table(self) -> Mapping[int, Mapping[str, int]]:
        """rank → coordinates for every rank, computed when asked (a job of a million ranks
        costs nothing until a selector walks it)."""
        return _Table(self)

    def to_json(self) -> dict[str, object]:
        return {"dims": self.sizes, "order": list(self.order), "world_size": self.world,
                "source": self.source, "read": [r.to_json() for r in self.read]}


class _Table(Mapping[int, Mapping[str, int]]):
    def __init__(self, layout: Layout) -> None:
        self.layout = layout

    def __getitem__(self, rank: int) -> Mapping[str, int]:
        if not isinstance(rank, int) or not 0 <= rank < self.layout.world:
            raise KeyError(rank)
        return self.layout.coords_of(rank)

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.layout.world))

    def __len__(self) -> int:
        return self.layout.world


@dataclass(frozen=True)
class Mismatch:
    """Sizes the command gives that its world cannot hold: said as the framework would
    stop, at the value that makes it so (``at``; its line and column are the command's own
    when ``at.file`` is None)."""

    message: str
    at: Read

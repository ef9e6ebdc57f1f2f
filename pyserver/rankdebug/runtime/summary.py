"""What a tensor or array holds, in a few numbers, and digests of its element ranges, so that
ranks can be compared without moving the data (``rankdebug eval JOB RANKS EXPR``).

``summarize(value)``: for a ``torch.Tensor`` (a ``Parameter``, a ``DTensor``'s local shard)
or a NumPy array: shape, dtype, device, min, max, mean, norm (over the finite elements;
``None`` when there are none), NaN and Inf counts, and the MD5 of the contents as laid out in
memory (row-major, contiguous): equal checksums mean bitwise-equal tensors.

``digest(value, ranges)``: for each ``[a, b)`` range of the flattened value, either its
elements (a short range) or ``CHUNKS`` chunks, each with its checksum (and, when a tolerance
is in play, finite min and max and NaN/Inf counts): the comparing side narrows a difference
down to single elements in a few rounds, and tells "close within T" from "far" on the way
(a chunk whose min or max is more than T apart holds an element more than T apart).

torch and NumPy are never imported here: a value is one of theirs only if its module is
already loaded. Stdlib only, Python 3.9 and later.
"""

from __future__ import annotations

import math
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CHUNKS = 64  # chunks per range: a 1e9-element difference is found in 5 rounds
LEAF = 64  # a range this short comes back as its elements


def _md5() -> Any:
    import hashlib  # here, as ctypes below: an eval of a number loads neither

    try:
        return hashlib.md5(usedforsecurity=False)  # a checksum; FIPS builds refuse plain md5
    except TypeError:  # Python 3.8's signature
        return hashlib.md5()


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _number(x: float) -> float | str:
    """An element as JSON can carry it: a float, or "nan", "inf", "-inf"."""
    return x if math.isfinite(x) else str(x)


# Elements summarized at a time: the float64 copy a summary works on stays at 32 MiB,
# whatever the tensor's size (a 1 GiB float32 tensor would take 2 GiB more at once).
STATS_CHUNK = 1 << 22


class _Stats:
    """Finite min, max, mean and norm, and NaN and Inf counts, summed up chunk by chunk."""

    def __init__(self) -> None:
        self.nan = self.inf = self.count = 0
        self.low = math.inf
        self.high = -math.inf
        self.total = self.squares = 0.0

    def add(self, count: int, low: float, high: float, total: float, squares: float) -> None:
        self.count += count
        self.low, self.high = min(self.low, low), max(self.high, high)
        self.total += total
        self.squares += squares

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = {"nan": self.nan, "inf": self.inf, "min": None, "max": None,
                               "mean": None, "norm": None}
        if self.count:
            out.update(min=_finite(self.low), max=_finite(self.high),
                       mean=_finite(self.total / self.count),
                       norm=_finite(math.sqrt(self.squares)))
        return out


class _Torch:
    """A tensor's elements, flattened, on the CPU and contiguous (the copy is kept, so later
    digests of the same value read memory only)."""

    def __init__(self, torch: Any, tensor: Any) -> None:
        self.torch = torch
        t = tensor.detach()
        if hasattr(t, "to_local"):  # a DTensor: this rank's shard
            t = t.to_local()
        self.shape = list(t.shape)
        self.dtype = str(t.dtype)
        self.device = str(t.device)
        if t.layout != torch.strided:
            t = t.to_dense()
        self.flat = t.reshape(-1).cpu().contiguous()
        self.n = int(self.flat.numel())
        self.floating = bool(t.is_floating_point())
        self.complex = bool(t.is_complex())

    def snapshot(self) -> None:
        """Copy the elements, so that later digests read them as they were now."""
        self.flat = self.flat.clone()

    def raw(self) -> memoryview:
        size = self.n * self.flat.element_size()
        if size == 0:
            return memoryview(b"")
        import ctypes

        return memoryview((ctypes.c_char * size).from_address(self.flat.data_ptr())).cast("B")

    @property
    def itemsize(self) -> int:
        return int(self.flat.element_size())

    def stats(self, a: int, b: int) -> dict[str, Any]:
        acc = _Stats()
        for lo in range(a, b, STATS_CHUNK):
            self._add(acc, lo, min(b, lo + STATS_CHUNK))
        return acc.result()

    def _add(self, acc: _Stats, a: int, b: int) -> None:
        torch = self.torch
        part = self.flat[a:b]
        if self.complex:
            part = torch.view_as_real(part).reshape(-1)
        if part.dtype == torch.bool:
            part = part.to(torch.uint8)
        if self.floating or self.complex:
            nan = int(torch.isnan(part).sum())
            inf = int(torch.isinf(part).sum())
            finite = part[torch.isfinite(part)] if nan or inf else part
        else:
            nan = inf = 0
            finite = part
        acc.nan += nan
        acc.inf += inf
        if finite.numel():
            f64 = finite.to(torch.float64)
            acc.add(int(f64.numel()), float(f64.min()), float(f64.max()), float(f64.sum()),
                    float((f64 * f64).sum()))

    def values(self, a: int, b: int) -> list[float | str]:
        part = self.flat[a:b]
        if self.complex:
            return [_number(float(x)) for x in self.torch.view_as_real(part).reshape(-1)]
        return [_number(float(x)) for x in part.tolist()]


class _Numpy:
    def __init__(self, np: Any, array: Any) -> None:
        self.np = np
        self.shape = list(array.shape)
        self.dtype = str(array.dtype)
        self.device = "cpu"
        self.flat = np.ascontiguousarray(array).reshape(-1)
        self.n = int(self.flat.size)
        self.floating = bool(np.issubdtype(array.dtype, np.floating))
        self.complex = bool(np.issubdtype(array.dtype, np.complexfloating))
        self.numeric = bool(np.issubdtype(array.dtype, np.number)
                            or np.issubdtype(array.dtype, np.bool_))

    def snapshot(self) -> None:
        self.flat = self.flat.copy()

    def raw(self) -> memoryview:
        return memoryview(self.flat.view(self.np.uint8)) if self.n else memoryview(b"")

    @property
    def itemsize(self) -> int:
        return int(self.flat.itemsize)

    def stats(self, a: int, b: int) -> dict[str, Any]:
        acc = _Stats()
        if self.numeric:
            for lo in range(a, b, STATS_CHUNK):
                self._add(acc, lo, min(b, lo + STATS_CHUNK))
        return acc.result()

    def _add(self, acc: _Stats, a: int, b: int) -> None:
        np = self.np
        part = self.flat[a:b]
        if self.complex:
            part = part.view(part.real.dtype)
        part = part.astype(np.float64)
        if self.floating or self.complex:
            acc.nan += int(np.isnan(part).sum())
            acc.inf += int(np.isinf(part).sum())
            part = part[np.isfinite(part)]
        if part.size:
            acc.add(int(part.size), float(part.min()), float(part.max()), float(part.sum()),
                    float((part * part).sum()))

    def values(self, a: int, b: int) -> list[float | str]:
        part = self.flat[a:b]
        if self.complex:
            part = part.view(part.real.dtype)
        if not self.numeric:
            return [str(x) for x in part.tolist()]
        return [_number(float(x)) for x in part.tolist()]


def view(value: Any) -> _Torch | _Numpy | None:
    """The value as elements, if it is a tensor or an array (of a module already loaded)."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, getattr(torch, "Tensor", ())):
        return _Torch(torch, value)
    np = sys.modules.get("numpy")
    if np is not None and isinstance(value, getattr(np, "ndarray", ())):
        return _Numpy(np, value)
    return None


def _checksum(raw: memoryview) -> str:
    h = _md5()
    h.update(raw)
    return str(h.hexdigest())


def summarize(value: Any) -> tuple[dict[str, Any] | None, _Torch | _Numpy | None]:
    """The summary of a tensor or an array (None for anything else), and its element view
    (kept by the caller for ``digest``)."""
    try:
        elements = view(value)
    except Exception:  # a meta tensor, a fake tensor, a subclass that refuses: no summary
        return None, None
    if elements is None:
        return None, None
    out: dict[str, Any] = {"shape": elements.shape, "dtype": elements.dtype,
                           "device": elements.device, "numel": elements.n}
    out.update(elements.stats(0, elements.n))
    try:
        out["checksum"] = _checksum(elements.raw())
    except Exception:
        out["checksum"] = None
    return out, elements


def digest(elements: _Torch | _Numpy, ranges: list[list[int]],
           stats: bool = True) -> list[dict[str, Any]]:
    """Per ``[a, b)`` range: {"values": [...]} when it is at most ``LEAF`` long, else
    {"chunks": [{"a", "b", "h", and with ``stats`` "min", "max", "nan", "inf"}, ...]}."""
    raw = elements.raw()
    size = elements.itemsize
    out: list[dict[str, Any]] = []
    for lo_hi in ranges:
        a, b = max(0, int(lo_hi[0])), min(elements.n, int(lo_hi[1]))
        if b - a <= LEAF:
            out.append({"a": a, "b": b, "values": elements.values(a, b)})
            continue
        step = -(-(b - a) // CHUNKS)
        chunks = []
        for lo in range(a, b, step):
            hi = min(b, lo + step)
            chunk: dict[str, Any] = {"a": lo, "b": hi,
                                     "h": _checksum(raw[lo * size:hi * size])[:16]}
            if stats:
                one = elements.stats(lo, hi)
                chunk.update({k: one[k] for k in ("min", "max", "nan", "inf")})
            chunks.append(chunk)
        out.append({"a": a, "b": b, "chunks": chunks})
    return out

"""This rank's parallel coordinates, read from the job's own layout when asked.

``read()`` gives ``{"coords": {"dp": 1, "tp": 3}, "sizes": {"dp": 2, "tp": 4}, "source": S}``
or None, from, in order:

- Megatron-LM's ``megatron.core.parallel_state`` (also MindSpeed's), when the job imported it
  and initialised its groups: ``pp``, ``dp``, ``tp``, and ``cp`` / ``ep`` where their size is
  more than 1 (source ``"megatron"``);
- the job's ``torch.distributed`` DeviceMesh objects (source ``"device_mesh"``): every root
  mesh this rank is in, largest first, with its ``mesh_dim_names`` (``dim0``, ``dim1`` …
  where it has none) and ``get_coordinate()``. torch keeps no list of the meshes a job
  made, so they are found as the objects that refer to the DeviceMesh class
  (``gc.get_referrers``: about 12 ms for 200,000 objects, under the GIL);
- where that finds none although the mesh's process groups exist (their description is
  ``mesh_<dim>``; a job that called ``gc.freeze()`` hides its objects from the collector):
  the rank's place in each such group (source ``"process_groups"``).

Nothing is imported: torch and Megatron are read from ``sys.modules`` only, so a job that
imported neither pays a dictionary lookup. A result is kept once found (a job's layout does
not change); while there is none, an ask searches again only when the job has made process
groups since (a mesh makes some) or ``RESCAN_S`` has passed, so repeated asks stay cheap.
``watch`` records them unasked once the job has them. Never raises. Stdlib only, Python 3.9
and later.
"""

from __future__ import annotations

import sys
import threading
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

RESCAN_S = 30.0
MAX_DIMS = 16
_NAME = r"[A-Za-z_][A-Za-z0-9_]{0,39}"  # what a selector can name (``rankdebug.ranks``)


class _Cache:
    found: dict[str, Any] | None = None
    recorded = False  # into the registry, once
    groups = -1  # how many process groups the job had at the last search that found none
    searched = 0.0  # time.monotonic() of that search


_cache = _Cache()
_lock = threading.Lock()


def read() -> dict[str, Any] | None:
    """This rank's coordinates (see the module docstring), or None where the job has no
    layout that can be read (yet)."""
    if _cache.found is not None or "torch.distributed" not in sys.modules:
        return _cache.found
    with _lock:
        if _cache.found is None:
            try:
                _cache.found = _search()
            except Exception:  # torch or Megatron internals of another version: no coords
                _cache.found = None
    return _cache.found


def _search(again_after: float = RESCAN_S) -> dict[str, Any] | None:
    found = _megatron()
    if found is not None:
        return found
    c10d = sys.modules.get("torch.distributed.distributed_c10d")
    if c10d is None or not c10d.is_initialized():
        return None  # a mesh needs the default process group
    groups = _process_groups(c10d)
    now = time.monotonic()
    if len(groups) == _cache.groups and now - _cache.searched < again_after:
        return None
    found = _device_mesh() or _from_groups(c10d, groups)
    if found is None:
        _cache.groups, _cache.searched = len(groups), now
    return found


def _megatron() -> dict[str, Any] | None:
    ps = sys.modules.get("megatron.core.parallel_state")
    if ps is None or not ps.model_parallel_is_initialized():
        return None
    coords: dict[str, int] = {}
    sizes: dict[str, int] = {}
    # Outermost first, as Megatron orders ranks (tensor parallel changes fastest).
    for dim, name, always in (("pp", "pipeline_model_parallel", True),
                              ("dp", "data_parallel", True),
                              ("cp", "context_parallel", False),
                              ("tp", "tensor_model_parallel", True),
                              ("ep", "expert_model_parallel", False)):
        try:
            size = getattr(ps, f"get_{name}_world_size")()
            index = getattr(ps, f"get_{name}_rank")()
        except Exception:  # a group this Megatron did not make (experts, context)
            continue
        if _index(index) and _index(size) and index < size and (always or size > 1):
            coords[dim], sizes[dim] = index, size
    return {"coords": coords, "sizes": sizes, "source": "megatron"} if coords else None


def _device_mesh() -> dict[str, Any] | None:
    module = sys.modules.get("torch.distributed.device_mesh")
    cls = getattr(module, "DeviceMesh", None)
    if not isinstance(cls, type):
        return None
    import gc

    classes = _subclasses(cls)
    meshes: list[Any] = [m for m in gc.get_referrers(*classes) if isinstance(m, cls)]
    roots: list[tuple[tuple[Any, ...], tuple[Any, ...], tuple[int, ...]]] = []
    for mesh in meshes:
        try:
            if _is_root(mesh, module):
                coordinate = mesh.get_coordinate()
                shape = tuple(mesh.shape)
                if coordinate is not None and len(coordinate) == len(shape):
                    names = mesh.mesh_dim_names or tuple(f"dim{i}" for i in range(len(shape)))
                    roots.append((tuple(names), tuple(coordinate), shape))
        except Exception:  # one being built in another thread right now, or of another version
            continue
    # The largest mesh first (the job's world mesh); a name another one also has is its.
    roots.sort(key=lambda r: (-_product(r[2]), r[0]))
    coords: dict[str, int] = {}
    sizes: dict[str, int] = {}
    for names, coordinate, shape in roots:
        for i, size in enumerate(shape):  # lengths checked above (zip(strict) is 3.10's)
            if i < len(names):
                _put(coords, sizes, names[i], coordinate[i], size)
    return {"coords": coords, "sizes": sizes, "source": "device_mesh"} if coords else None


def _subclasses(cls: type) -> list[type]:
    out = [cls]
    sub: type
    for sub in cls.__subclasses__():
        out.extend(_subclasses(sub))
    return out


def _is_root(mesh: Any, module: Any) -> bool:
    """Not a slice or a flattening of another mesh (their dimensions are the root's)."""
    root = getattr(mesh, "_get_root_mesh", None)
    if callable(root):
        return root() is mesh
    mapping = getattr(getattr(module, "_mesh_resources", None), "child_to_root_mapping", {})
    return mesh not in mapping  # torch before 2.9


def _process_groups(c10d: Any) -> dict[Any, dict[int, int]]:
    """Every process group this rank is in -> {global rank: its rank in the group}."""
    world = getattr(c10d, "_world", None)
    ranks = getattr(world, "pg_group_ranks", None)
    return dict(ranks) if isinstance(ranks, dict) else {}


def _from_groups(c10d: Any, groups: dict[Any, dict[int, int]]) -> dict[str, Any] | None:
    """A mesh's dimensions from its process groups (``mesh_<dim>``, the rank's place in each
    one: its coordinate where the mesh lists ranks in order, as ``init_device_mesh`` does)."""
    me = c10d.get_rank()
    coords: dict[str, int] = {}
    sizes: dict[str, int] = {}
    for group, members in groups.items():
        desc = getattr(group, "group_desc", "")
        if not isinstance(desc, str) or not desc.startswith("mesh_") or desc == "mesh_default":
            continue
        index = members.get(me)
        if _index(index):
            _put(coords, sizes, desc[len("mesh_"):], index, len(members))
    return {"coords": coords, "sizes": sizes, "source": "process_groups"} if coords else None


def _put(coords: dict[str, int], sizes: dict[str, int], name: Any, index: Any,
         size: Any) -> None:
    if not isinstance(name, str) or not _index(index) or not _index(size):
        return
    import re  # only once there is a layout: a rank without one never loads it

    name = name if re.fullmatch(_NAME, name) else re.sub(r"[^A-Za-z0-9_]", "_", name)[:40] or "dim"
    if name[0].isdigit():
        name = f"d{name}"[:40]
    if name not in coords and len(coords) < MAX_DIMS and index < size:
        coords[name], sizes[name] = index, size


def _index(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _product(shape: tuple[int, ...]) -> int:
    out = 1
    for n in shape:
        out *= n
    return out


POLL_S = 2.0
POLL_MAX_S = 10.0  # a job with no layout is looked at this often (a later mesh: seen in 10 s)


def watch(start_thread: Any) -> None:
    """Record the coordinates as soon as the job has them, unasked (``rankdebug jobs`` then
    reads them from the registry and never has to ask every rank): a thread of the
    handler's (``start_thread``) that looks every ``POLL_S`` at how many process groups the
    job has (a dictionary's size), and searches once that count has held for a whole poll
    (a mesh or Megatron makes its groups one after another: a layout half made is not read)
    and is one it has not searched at. So a job that makes no process group costs nothing,
    and one without a layout a search per count of groups, not one per poll; while the
    count holds at one searched, the look backs off to every ``POLL_MAX_S``."""
    start_thread("rankdebug-handler-coords", _watch)


def _watch() -> None:
    last, pause = -1, POLL_S
    while _cache.found is None:
        time.sleep(pause)
        if "torch.distributed" not in sys.modules:
            pause = min(pause * 2, POLL_MAX_S)  # a job without torch.distributed yet
            continue
        c10d = sys.modules.get("torch.distributed.distributed_c10d")
        try:
            now = len(_process_groups(c10d)) if c10d is not None else -1
        except Exception:  # torch internals of another version: asked only, then
            return
        if now != last:
            last, pause = now, POLL_S  # groups are being made: look again soon
            continue
        if now == _cache.groups:
            # Searched at this count and found no layout: the job has none (most jobs),
            # so look less and less often, until it makes a group again.
            pause = min(pause * 2, POLL_MAX_S)
            continue
        with _lock:
            if _cache.found is None:
                try:
                    _cache.found = _search(again_after=float("inf"))
                except Exception:
                    return
    found = _cache.found
    if found is not None and not _cache.recorded:
        _cache.recorded = True
        record(found)


def record(found: dict[str, Any]) -> None:
    """Put the coordinates into the rank's registry entry (where ``rankdebug jobs`` reads
    them without asking the rank again); the registry merges under the job's lock, so the
    supervisor's own merges keep them. An entry that is gone (the rank ended) is not made
    again."""
    reporting = sys.modules.get("rankdebug.runtime.reporting")  # loaded: the rank reports
    state = getattr(reporting, "state", None)
    job, rank = getattr(state, "job", ""), getattr(state, "rank", None)
    if not job or not isinstance(rank, int):
        return
    from rankdebug.runtime import registry

    # The registry sorts an entry's keys: the dimensions' order is kept beside them.
    fields = {"coords": found["coords"], "coord_dims": list(found["coords"]),
              "coord_sizes": found["sizes"], "coords_from": found["source"]}
    try:
        if registry.read_rank(job, rank) is not None:
            registry.update_rank(job, rank, **fields)
    except Exception:  # a registry that cannot be written: the handler still answers
        return


def answer(start_thread: Any) -> dict[str, Any]:
    """The handler's reply to ``coords``; the first coordinates found are also recorded,
    from a thread of the handler's (``start_thread``), after the reply."""
    found = read()
    if found is None:
        return {"event": "coords", "coords": None, "sizes": None, "source": None}
    if not _cache.recorded:
        _cache.recorded = True
        start_thread("rankdebug-handler-coords", record, found)
    return {"event": "coords", "coords": dict(found["coords"]), "sizes": dict(found["sizes"]),
            "source": found["source"]}

"""Which collective this rank waits in, and how far each of its process groups has got, read
from PyTorch's own records while the main thread is blocked (``rankdebug stacks``).

torch's Flight Recorder (on by default for gloo and NCCL in recent releases;
``TORCH_FR_BUFFER_SIZE=0`` turns it off) keeps the last collectives of every group with their
sequence numbers; gloo never marks an entry completed, so "retired" tells a finished one.
Without it (an older torch, or turned off) the main thread's Python stack still names the
operation and its group, and the group's own counter gives the number.

``state()`` → ``{"current": {"op", "group", "desc", "seq", "source", "file", "line"} | None,
"groups": {name: {"desc", "ranks", "issued", "done"}}}`` or None when torch.distributed is
not initialised. Stdlib only (torch is read from ``sys.modules``), Python 3.9 and later.
"""

from __future__ import annotations

import pickle
import sys
import threading

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_C10D_FILE = "distributed_c10d.py"


def _world(dist: Any) -> Any:
    return getattr(getattr(dist, "distributed_c10d", None), "_world", None)


def _groups(dist: Any) -> dict[str, dict[str, Any]]:
    """Every process group this rank is in: name -> desc, global ranks, its counter."""
    world = _world(dist)
    out: dict[str, dict[str, Any]] = {}
    if world is None:
        return out
    for pg in list(world.pg_map):
        name = str(world.pg_names.get(pg, getattr(pg, "group_name", "?")))
        try:
            seq: int | None = int(pg._get_sequence_number_for_group())
        except Exception:  # a backend without the counter
            seq = None
        out[name] = {"desc": str(getattr(pg, "group_desc", "") or ""),
                     "ranks": sorted(int(r) for r in world.pg_group_ranks.get(pg, {})),
                     "counter": seq, "issued": None, "done": None}
    return out


def _flight_recorder(groups: dict[str, dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Fill each group's issued/done numbers from the Flight Recorder; the entries not yet
    retired, per group (empty when the recorder is off)."""
    c10d = sys.modules.get("torch._C._distributed_c10d")
    dump = getattr(c10d, "_dump_fr_trace", None)
    if dump is None:
        return {}
    try:
        raw = pickle.loads(dump(includeCollectives=True, includeStackTraces=False,
                                onlyActive=False))
    except Exception:  # an older signature, or a recorder that cannot dump
        return {}
    open_: dict[str, list[dict[str, Any]]] = {}
    for entry in raw.get("entries", []):
        if entry.get("is_p2p"):
            continue
        name = str(entry["process_group"][0])
        group = groups.setdefault(name, {"desc": str(entry["process_group"][1]), "ranks": [],
                                         "counter": None, "issued": None, "done": None})
        seq = int(entry["collective_seq_id"])
        group["issued"] = max(group["issued"] or 0, seq)
        if entry.get("retired"):
            group["done"] = max(group["done"] or 0, seq)
        else:
            open_.setdefault(name, []).append(entry)
    return open_


def _in_python(dist: Any) -> dict[str, Any] | None:
    """The torch.distributed call the main thread is inside, and its group's name."""
    frame = sys._current_frames().get(threading.main_thread().ident or 0)
    world = _world(dist)
    while frame is not None:
        code = frame.f_code
        if code.co_filename.endswith(_C10D_FILE) and not code.co_name.startswith("_"):
            group = frame.f_locals.get("group")
            if group is None and world is not None:
                group = world.default_pg
            name = world.pg_names.get(group) if world is not None and group else None
            return {"op": code.co_name, "group": str(name) if name is not None else None,
                    "file": code.co_filename, "line": frame.f_lineno}
        frame = frame.f_back
    return None


def state() -> dict[str, Any] | None:
    dist = sys.modules.get("torch.distributed")
    if dist is None or not getattr(dist, "is_initialized", lambda: False)():
        return None
    groups = _groups(dist)
    open_ = _flight_recorder(groups)
    current = None
    here = _in_python(dist)
    if here is not None:
        name = here["group"]
        group = groups.get(name or "", {})
        waiting = open_.get(name or "")
        if waiting:
            entry = max(waiting, key=lambda e: int(e["collective_seq_id"]))
            current = {"op": str(entry["profiling_name"]).split(":", 1)[-1],
                       "seq": int(entry["collective_seq_id"]), "source": "flight recorder"}
        else:
            current = {"op": here["op"], "seq": group.get("counter"), "source": "stack"}
        current.update(group=name, desc=group.get("desc"), file=here["file"],
                       line=here["line"])
    for group in groups.values():
        if group["issued"] is None:  # no recorder: the counter (it counts p2p ops too)
            group["issued"] = group["counter"]
        del group["counter"]
    return {"current": current, "groups": groups}

"""The collective a stuck rank waits in below Python, read from its native frames.

A rank read by py-spy alone has only its Python stack: one blocked in ``backward`` shows
``_engine_run_backward`` and nothing of DDP, whose gradient all_reduce it waits for (the
Reducer waits for its buckets' work when backward ends). Each rank judged *stuck* and
*blocked* (the same frame at every read, no CPU, no wake) inside library code is read
with ``py-spy dump --native`` (about 0.5 s), one rank per Python stack; the C++ frames of
its main thread say what it waits in. Only calls that wait for the other ranks are named,
each in the Flight Recorder's words; a rank whose native frames name none stays *stuck*.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from rankdebug.jobs.diagnose.seen import Seen, stack_key
from rankdebug.pyspy import main_frames

# Native function (py-spy's demangled name) -> the collective it waits for, in the words the
# Flight Recorder's reading uses (``runtime.collectives``).
_DDP = {  # DDP's Reducer waits in its own collectives, issued from C++
    "c10d::Reducer::finalize_backward": ("all_reduce", "DDP bucket, from backward"),
    "c10d::Reducer::sync_bucket_indices": ("broadcast", "DDP bucket rebuild, from forward"),
}
_GLOO_OP = re.compile(r"\bgloo::(allreduce|allgatherv?|broadcast|barrier|reduce_scatter|"
                      r"alltoallv?|gather|scatter|reduce)\b", re.IGNORECASE)
_GLOO_NAMES = {"allreduce": "all_reduce", "allgather": "all_gather", "allgatherv": "all_gather",
               "alltoall": "all_to_all", "alltoallv": "all_to_all"}
MAX_PARALLEL = 8


def waited_in(frames: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The collective named by a main thread's native frames (py-spy's JSON, innermost
    first), else None."""
    for frame in frames:
        name = str(frame.get("name") or "")
        ddp = _DDP.get(name)
        if ddp is not None:
            return {"op": ddp[0], "seq": None, "group": None, "context": ddp[1]}
        found = _GLOO_OP.search(name)
        if found:
            op = found.group(1).lower()
            return {"op": _GLOO_NAMES.get(op, op), "seq": None, "group": None}
    return None


def candidate(s: Seen) -> bool:
    """Stuck and blocked inside library code, in no collective its stack names: it may wait
    in one below Python."""
    return (s.state == "stuck" and s.firm and s.pid is not None and s.collective is None
            and bool(s.frames) and s.frames[0].library and not s.debugger)


def complete(seen: list[Seen]) -> None:
    """Each stuck, blocked rank whose native frames wait in a collective becomes
    *waiting* in it."""
    # One read per Python stack (STAT's classes): ranks blocked at the same frames wait in
    # the same call; a thousand ranks in DDP's backward cost one native read, not 1,000.
    alike: dict[tuple[tuple[str, str, int], ...], list[Seen]] = {}
    for s in seen:
        if candidate(s):
            alike.setdefault(stack_key(s.frames), []).append(s)
    if not alike:
        return
    leads = [them[0] for them in alike.values()]
    with ThreadPoolExecutor(max_workers=min(MAX_PARALLEL, len(leads))) as pool:
        reads = list(pool.map(lambda s: main_frames(s.pid or 0, "--native"), leads))
    for them, frames in zip(alike.values(), reads, strict=True):
        found = waited_in(frames) if frames else None
        if found is None:
            continue
        for s in them:
            s.state, s.collective = "waiting", dict(found)
            s.waited = max(s.waited, 1)

"""Whether a rank busy in one place is computing or spinning: its variables, read twice.

A stack read from outside shows where a rank is, not how far it got: rank 0 of nanoGPT in
its evaluation stays in ``Block.forward``, called from the same lines, for the whole of a
30 s eval while rank 1 waits in DDP's all_reduce, and a second of reads calls it stuck. Its
variables say otherwise: the layer (``self``) and the batch (``x``) change from read to read,
where a rank polling a source that never answers keeps the same ones. Each rank judged
*stuck* but not blocked gets two ``py-spy dump --locals`` reads (about 20 ms each) ``GAP`` apart;
a variable of a frame both reads share that changed (its value, or the object it names) is
progress: the rank is *running*. Values are compared, never shown. (Allocators reuse
addresses: a new tensor of the same shape often lands where the last one was, so a loop's
counter or accumulator is what tells, and a polling loop that counts its tries reads as
progress too: see ``changed``.)
"""

from __future__ import annotations

import time
from collections.abc import Hashable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from rankdebug.jobs.diagnose.seen import Seen
from rankdebug.pyspy import main_frames

GAP = 0.3
MAX_RANKS = 64  # a job of thousands spinning: the first ranks tell, the rest are as read
MAX_PARALLEL = 8

Call = tuple[Any, Any, Any]  # function, file, line
Frames = list[tuple[Call, dict[str, Hashable]]]  # outermost first


def _read(pid: int) -> Frames | None:
    """The main thread's frames, outermost first, each (function, file) with its variables
    (name -> repr where py-spy gives one, else the object's address)."""
    raw = main_frames(pid, "--locals")
    if raw is None:
        return None
    return [((f.get("name"), f.get("filename"), f.get("line")),
             {str(v.get("name")): _value(v) for v in f.get("locals") or []
              if isinstance(v, dict)})
            for f in reversed(raw)]


def _value(v: dict[str, Any]) -> Hashable:
    text = v.get("repr")
    return text if isinstance(text, str) and " at 0x" not in text else (
        str(text).split(" at 0x")[0] if text else None, v.get("addr"))


def changed(first: Frames, second: Frames) -> bool:
    """A variable of a frame both reads share (the same call, from the outermost down to
    the first that differs) holds another value or object. A loop that counts or reads a
    clock while it polls changes too: it is said as slow, not blamed at once (nothing read
    from outside tells it from a loop that will end); one whose variables stay is a spin."""
    for (a_at, a), (b_at, b) in zip(first, second, strict=False):
        if a_at[:2] != b_at[:2]:
            return False  # a different call from here on: the place's own test says it
        if any(name in b and b[name] != value for name, value in a.items()):
            return True
        if a_at != b_at:
            return False
    return False


def complete(seen: list[Seen]) -> None:
    """Each rank stuck but not blocked (busy, or going round in its code while the others
    wait: ``findings.settle``) whose variables changed between two reads is running. Every
    rank is read once, then all again ``GAP`` later (two sweeps, ranks in parallel)."""
    todo = [s for s in seen if s.state == "stuck" and s.manner != "blocked"
            and s.pid is not None and not s.debugger][:MAX_RANKS]
    if not todo:
        return
    with ThreadPoolExecutor(max_workers=min(MAX_PARALLEL, len(todo))) as pool:
        first = list(pool.map(lambda s: _read(s.pid or 0), todo))
        time.sleep(GAP)
        second = list(pool.map(lambda s: _read(s.pid or 0), todo))
    for s, one, two in zip(todo, first, second, strict=True):
        if one is not None and two is not None and changed(one, two):
            s.state, s.moved, s.firm = "running", True, False

"""One point of training for every rank: a compare reads each rank's value after the same
optimizer step, not whenever its request happened to land (ranks read at different moments
are a step apart often enough on a training job, and an unchanged weight then looks
diverged).

The clock is the rank's collective count over the process groups it is in (``seq``): under
data parallel training (DDP, ZeRO) and symmetric tensor parallelism every rank issues as
many collectives per step, so after the same optimizer step every rank has the same count,
whether the collectives came from Python or from C++ (DDP's reducer). Where ranks issue
different numbers (pipeline stages), the counts never agree and the compare says it could
not read one point.
A compare (``jobs.one_point``) asks each rank for its count, takes one past the largest,
T, and each rank evaluates after its first ``optimizer.step()`` (any
``torch.optim.Optimizer``: plain, under accelerate, a GradScaler, DeepSpeed's inner one)
that ends at count T or later: the same step on every rank. The main thread is held in a
global post-step hook only while its own rank is read; the hook is removed again, so a rank
costs nothing when no compare waits. A rank that passed T before its hook was in place reads
at a later step; its reply says the count, and the compare tries again.

Pure Python, 3.9 and later; torch is only read where the rank has imported it.
"""

from __future__ import annotations

import contextlib
import sys
import threading

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

HOLD_MAX_S = 120.0  # a hold that nothing releases (the handler died) ends by itself


def seq() -> int | None:
    """The rank's collective count over every process group it is in, None where there is
    none. Every group, not the default one alone: DeepSpeed's ZeRO, Megatron and FSDP with
    a mesh issue their collectives on groups of their own (measured: a DeepSpeed job's
    default group stays at 0 while it trains)."""
    dist = sys.modules.get("torch.distributed")
    if dist is None:
        return None
    try:
        if not dist.is_available() or not dist.is_initialized():
            return None
        c10d = dist.distributed_c10d
        world = getattr(c10d, "_world", None)
        groups = list(world.pg_map) if world is not None else [c10d._get_default_group()]
    except Exception:  # an older torch: no clock
        return None
    total, counted = 0, False
    for group in groups:
        try:
            total += int(group._get_sequence_number_for_group())
            counted = True
        except Exception:  # a backend without the count
            continue
    return total if counted else None


def point() -> dict[str, Any]:
    """Where this rank is: its collective count, whether its main thread is stopped (the
    debugger holds it, or it is held at an uncaught exception), and whether it has made an
    optimizer at all (a job that has none takes no step for a compare to wait for)."""
    from rankdebug.runtime import kept

    return {"event": "point", "seq": seq(), "stopped": kept.stopped_main(),
            "optimizer": has_optimizer()}


def has_optimizer() -> bool | None:
    """Whether any ``torch.optim.Optimizer`` was made in this process: torch wraps a class's
    ``step`` (marked ``hooked``) the first time one of its instances is made. None where
    torch's optimizers are not imported or that mark is gone (another torch)."""
    optim = sys.modules.get("torch.optim.optimizer")
    base = getattr(optim, "Optimizer", None)
    if not isinstance(base, type) or not hasattr(base, "_patch_step_function"):
        return None
    seen: set[type] = set()
    todo = [base]
    while todo:
        cls = todo.pop()
        if cls in seen:
            continue
        seen.add(cls)
        if getattr(cls.__dict__.get("step"), "hooked", False):
            return True
        todo.extend(cls.__subclasses__())
    return False


class _Wait:
    def __init__(self, target: int) -> None:
        self.target = target
        self.arrived = threading.Event()
        self.release = threading.Event()
        self.seq: int | None = None


_lock = threading.Lock()
_waiting: list[_Wait] = []
_handle: list[Any] = []  # the registered hook's handle, while a compare waits


def _hook(_optimizer: Any, _args: Any, _kwargs: Any) -> None:
    """After any optimizer's step, on the main thread: stay here while a compare that
    waits for this step reads the rank (the handler's thread evaluates meanwhile)."""
    if not _waiting or threading.current_thread() is not threading.main_thread():
        return
    count = seq()
    if count is None:
        return
    with _lock:
        due = [w for w in _waiting if count >= w.target and not w.arrived.is_set()]
        for one in due:
            one.seq = count
            one.arrived.set()
    for one in due:
        one.release.wait(HOLD_MAX_S)


def _register() -> bool:
    if _handle:
        return True
    optimizer = sys.modules.get("torch.optim.optimizer")
    if optimizer is None:
        return False
    try:
        _handle.append(optimizer.register_optimizer_step_post_hook(_hook))
    except Exception:  # a torch without global step hooks
        return False
    return True


@contextlib.contextmanager
def at_step(target: int, wait_s: float) -> Iterator[int | None]:
    """The collective count once the main thread stops after its first optimizer step
    ending at count ``target`` or later (it stays there until the context ends), or None
    when no such step comes within ``wait_s`` (the job is not training, or a step takes
    longer). Only this rank waits: no other rank depends on the moment it holds."""
    one = _Wait(target)
    with _lock:
        ready = seq() is not None and _register()
        if ready:
            _waiting.append(one)
    if not ready:
        yield None
        return
    try:
        yield one.seq if one.arrived.wait(wait_s) else None
    finally:
        with _lock:
            _waiting.remove(one)
            one.arrived.set()  # a hook that comes now finds nothing to wait for
            if not _waiting and _handle:
                _handle.pop().remove()
        one.release.set()

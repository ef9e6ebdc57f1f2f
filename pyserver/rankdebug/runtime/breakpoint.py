"""``rankdebug.breakpoint(ranks=0, others="wait")``: a breakpoint for a distributed job.

Every rank calls it at the same place (like ``torch.distributed.breakpoint``):

- the chosen ranks stop in the debugger at the line of the call, with no frame of ours on
  the stack the client sees. With no client attached,
  a chosen rank starts listening first, says where on stderr (and in the job registry, and
  to ``rankdebug launch`` when it runs the job), and waits for one;
- ``others="wait"``: the other ranks wait in this call, polling the job's rendezvous store
  (no collective, so no collective timeout), until every chosen rank has been continued;
  ``others="run"``: they run on (to block at their next collective);
- a chosen rank releases the others when its debugger continues it, detaches, or is gone:
  a thread watches the stopped thread's state, so pdb's problem (peers left hanging when
  the debugger quits) does not arise. If the rank is killed, its launcher ends the job.

Pure Python, 3.9 and later; torch is used only if the script already imported it.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import FrameType
    from typing import Any

_generation = [0]
POLL_S = 0.05


def _dist() -> Any:
    dist = sys.modules.get("torch.distributed")
    if dist is None or not dist.is_available() or not dist.is_initialized():
        return None
    return dist


def _my_rank() -> tuple[int, int | None, int | None]:
    from rankdebug.runtime.bootstrap import detect_rank

    # The launcher's variables (LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, …) give the local
    # rank; torch.distributed, once up, has the last word on rank and world size.
    found = detect_rank(os.environ)
    local_rank = found[1] if found is not None else None
    dist = _dist()
    if dist is not None:
        return int(dist.get_rank()), local_rank, int(dist.get_world_size())
    return found if found is not None else (0, local_rank, None)


def _chosen(ranks: int | str | list[int] | tuple[int, ...] | None, rank: int,
            local_rank: int | None) -> bool:
    if ranks is None:
        return True
    if isinstance(ranks, int):
        return rank == ranks
    if isinstance(ranks, str):
        from rankdebug.runtime.bootstrap import rank_chosen

        return rank_chosen(ranks, rank, local_rank)
    return rank in ranks


def _key(generation: int, rank: int) -> str:
    return f"rankdebug/breakpoint/{generation}/{rank}"


def breakpoint(
    ranks: int | str | list[int] | tuple[int, ...] | None = 0,
    others: str = "wait",
    *,
    frame: FrameType | None = None,
) -> None:
    """Stop ``ranks`` (an int, a list, or a ``--ranks`` string such as "0,2" or "local0";
    None: every rank) in the debugger; the others wait here (``others="wait"``) or run on
    (``others="run"``) until the chosen ranks continue."""
    if others not in ("wait", "run"):
        raise ValueError('others must be "wait" or "run"')
    caller = frame or sys._getframe(1)
    _generation[0] += 1
    generation = _generation[0]
    me = _my_rank()
    rank, local_rank, world_size = me
    dist = _dist()
    store = dist.distributed_c10d._get_default_store() if dist is not None else None
    if _chosen(ranks, rank, local_rank):
        _stop(caller, me, _key(generation, rank) if store is not None else None, store)
        return
    if others == "run" or store is None or world_size is None:
        return
    per_node = os.environ.get("LOCAL_WORLD_SIZE", "")
    if isinstance(ranks, str) and "local" in ranks and not per_node.isdigit():
        return  # the others' local ranks are not known here: do not wait on guesses
    size = int(per_node) if per_node.isdigit() and int(per_node) > 0 else None
    chosen = [r for r in range(world_size) if _chosen(ranks, r, r % size if size else None)]
    keys = [_key(generation, r) for r in chosen]
    while keys and not store.check(keys):
        time.sleep(POLL_S)


def _stop(frame: FrameType, me: tuple[int, int | None, int | None], key: str | None,
          store: Any) -> None:
    """Stop here in the debugger; ``me`` is (rank, local rank, world size)."""
    from rankdebug.runtime import bootstrap, debug, debugpy_start, reporting

    bootstrap.watch_uncaught(debugpy_start)
    rank = me[0]
    if reporting.state.pid != os.getpid():
        debug.prepare(*me)
    debugpy = debugpy_start.import_debugpy()
    if not debugpy.is_client_connected():
        host, port = debugpy_start.listen()
        sys.stderr.write(
            f"rankdebug: rank {rank} stopped at a breakpoint; "
            f"attach a debugger to {host}:{port}\n"
        )
        sys.stderr.flush()
        debugpy_start.wait_for_client()
    _suspend_here(frame, key, store, debugpy)


def _suspend_here(frame: FrameType, key: str | None, store: Any, debugpy: Any) -> None:
    """Stop at the caller's line, the line of the ``rankdebug.breakpoint()`` call (the
    client is shown ``frame`` and its callers, none of ours); a step or a continue goes on
    from there as from any stop. A thread that watches the stop releases the other ranks
    once the rank continues."""
    import pydevd
    from _pydevd_bundle.pydevd_comm_constants import CMD_SET_BREAK

    thread = threading.current_thread()
    # Traced from here on (this thread only), so that a step from the stop is carried out.
    pydevd.settrace(suspend=False, trace_only_current_thread=True,
                    patch_multiprocessing=False, notify_stdin=False)
    debugger = pydevd.get_global_debugger()
    debugger.set_trace_for_frame_and_parents(thread.ident, frame)
    if key is not None:
        # A debugger thread: neither traced nor suspended when the rank stops.
        from _pydevd_bundle.pydevd_daemon_thread import run_as_pydevd_daemon_thread

        run_as_pydevd_daemon_thread(debugger, _release_when_continued, thread, key, store,
                                    debugpy)
    info = debugger.set_additional_thread_info(thread)
    monitoring = _monitoring()
    saved = monitoring.suspend_current_thread_tracing() if monitoring is not None else False
    info.is_tracing += 1  # no trace event of this thread's while it waits (as pydevd does)
    try:
        debugger.set_suspend(thread, CMD_SET_BREAK)
        debugger.do_wait_suspend(thread, frame, "line", None)
    finally:
        info.is_tracing -= 1
        if saved and monitoring is not None:
            monitoring.resume_current_thread_tracing()


def _monitoring() -> Any:
    """pydevd's sys.monitoring module where it traces with it (Python 3.12 and later)."""
    import pydevd

    if not getattr(pydevd, "PYDEVD_USE_SYS_MONITORING", False):
        return None
    return getattr(pydevd, "pydevd_sys_monitoring", None)


def _release_when_continued(thread: threading.Thread, key: str, store: Any, debugpy: Any) -> None:
    """Set ``key`` once ``thread`` has stopped and then been continued (not stepped), or the
    client is gone, or the thread has ended."""
    from _pydevd_bundle.pydevd_additional_thread_info import set_additional_thread_info
    from _pydevd_bundle.pydevd_constants import STATE_SUSPEND

    info = set_additional_thread_info(thread)  # the thread's existing debugger state
    seen_stop = False
    deadline = time.monotonic() + 10.0  # it stops at its next line: at once
    while thread.is_alive():
        state = getattr(info, "pydev_state", None)
        stepping = getattr(info, "pydev_step_cmd", -1) not in (-1, None)
        if state == STATE_SUSPEND:
            seen_stop = True
        elif (seen_stop and not stepping) or (not seen_stop and time.monotonic() > deadline):
            break
        if not debugpy.is_client_connected():
            break
        time.sleep(POLL_S)
    # The store may be gone with the job: nobody is waiting any more then.
    with contextlib.suppress(Exception):
        store.set(key, "1")

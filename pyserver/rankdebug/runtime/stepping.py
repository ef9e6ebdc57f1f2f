"""A step given where a pause stopped at a frame's ``return`` is carried out: debugpy loses it.

pydevd (debugpy's tracer) suspends a paused thread at the next trace event of a traced frame,
whatever the event. A rank paused while its main thread waits in native code called as a
frame's last statement (``return func(*args)`` in torch.distributed's wrapper around
``all_reduce``, say) stops at that frame's ``return`` event: a library frame, hidden by
justMyCode, so the client is shown the caller's line. A step over (or out) given there
makes the returning frame the one to stop in. pydevd turns a step whose frame returns into a
step in, but it looks for that as the ``return`` event comes, before this step was given:
the thread then runs on and never stops again (debugpy 1.8.22; Pause, then Step Over in
plain VS Code does the same).

``install`` wraps ``PyDB.do_wait_suspend``: when a suspension at a frame's own ``return``
ends with such a step, the step becomes what pydevd makes of it at a return, a step in
(my code, under justMyCode): it stops at the caller's next line, reason ``step``.

Pure Python, 3.9 and later; imports pydevd (debugpy's) only when installed.
"""

from __future__ import annotations

import inspect
import sys

from rankdebug.runtime import frames

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import FrameType
    from typing import Any

# Frames whose return may only suspend them: pydevd has rules of its own for those.
_SUSPENDS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


def install() -> None:
    """Wrap pydevd's ``PyDB.do_wait_suspend`` (once; nothing when pydevd is not there)."""
    try:
        import debugpy.server  # noqa: F401  (puts debugpy's own pydevd on sys.path)
        import pydevd
        from _pydevd_bundle import pydevd_comm_constants as cmd
    except Exception:
        return
    original = pydevd.PyDB.do_wait_suspend
    if getattr(original, "rankdebug_stepping", False):
        return
    # pydevd's own rule for a step whose stop frame returns (pydevd_frame.trace_dispatch).
    into = {cmd.CMD_STEP_OVER: cmd.CMD_STEP_INTO, cmd.CMD_STEP_RETURN: cmd.CMD_STEP_INTO,
            cmd.CMD_SMART_STEP_INTO: cmd.CMD_STEP_INTO,
            cmd.CMD_STEP_OVER_MY_CODE: cmd.CMD_STEP_INTO_MY_CODE,
            cmd.CMD_STEP_RETURN_MY_CODE: cmd.CMD_STEP_INTO_MY_CODE}

    def do_wait_suspend(self: Any, thread: Any, frame: FrameType, event: str, arg: Any,
                        *args: Any, **kwargs: Any) -> Any:
        # Suspended at the frame's own return (not at the caller of a frame that returns,
        # which pydevd also calls a "return" stop): the event came from ``frame`` itself.
        own = event == "return" and _innermost(sys._getframe(1)) is frame
        result = original(self, thread, frame, event, arg, *args, **kwargs)
        if own:
            _step_on(thread, frame, into)
        return result

    do_wait_suspend.rankdebug_stepping = True  # type: ignore[attr-defined]
    pydevd.PyDB.do_wait_suspend = do_wait_suspend


def _innermost(frame: FrameType | None) -> FrameType | None:
    """The innermost frame that is not the debugger's (pydevd's pure-Python tracer has frames
    between the traced frame and ``do_wait_suspend``; its Cython one has none)."""
    while frame is not None and frames.DEBUGGER_FILE.search(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


def _step_on(thread: Any, frame: FrameType, into: dict[int, int]) -> None:
    """The step given while ``frame`` was suspended at its return: from a frame that is gone,
    it would never stop; step in instead, as pydevd does when the frame it steps in returns."""
    try:
        info = getattr(thread, "additional_info", None)
        if info is None or info.pydev_step_stop is not frame or \
                getattr(info, "pydev_use_scoped_step_frame", False) or \
                frame.f_code.co_flags & _SUSPENDS:
            return
        step = into.get(info.pydev_step_cmd)
        if step is None:
            return
        info.pydev_step_cmd, info.pydev_step_stop = step, None
        update = getattr(info, "update_stepping_info", None)
        if update is not None:
            update()
    except Exception:  # guest code: never fail the rank's debugger
        pass

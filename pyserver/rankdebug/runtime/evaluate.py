"""What an armed rank's handler does for ``eval``, ``digest`` and ``release``: run the user's
code in the frame asked for, within a time that is kept (``interrupt``), and keep a tensor's
elements for the compare that narrows a difference down (``kept``).

The frames eval sees are the main thread's, innermost first, without rankdebug's and the
debugger's own; of a rank held at an uncaught exception (``hold``: unchosen and held, or a
chosen rank its debugger stopped there), the traceback's, so eval runs where it raised.

Pure Python, 3.9 and later.
"""

from __future__ import annotations

import math
import sys
import threading

from rankdebug.runtime import frame_pick, frames, interrupt, kept

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import FrameType
    from typing import Any

    Spawn = Callable[..., threading.Thread]


def held() -> list[Any]:
    """The threads held at an uncaught exception (``hold.Held``), if the module is loaded
    (the hook imports it: no exception, no module)."""
    hold = sys.modules.get("rankdebug.runtime.hold")
    return list(hold.held()) if hold is not None else []


def stack() -> list[FrameType]:
    """The frames eval can pick from, innermost first: the main thread's (of a rank held at
    an exception: the traceback's), without rankdebug's and the debugger's own."""
    found = held()
    if found:
        frames_ = found[0].frames()
    else:
        frames_ = frames.walk(sys._current_frames().get(threading.main_thread().ident or 0))
    cut = frames.debugger_cut([f.f_code.co_filename for f in frames_], needs_user=False)
    return [f for f in frames_[cut:] if not frames.own_file(f.f_code.co_filename)]


def namespace(frame: object = None, function: object = None,
              ) -> tuple[dict[str, Any], dict[str, Any]]:
    """Where code is evaluated: with ``frame`` (``frame_pick``), that frame; else the frame
    of ``function`` where there is one (the frame a client compared from); else the user's
    frames on the stack, the innermost first (its locals win: of a held rank, the raising
    frame's), then the ``__main__`` module.

    Returns (globals, locals).
    """
    frames_ = stack()
    if frame is not None:
        one = frame_pick.pick(frames_, frame)
        return one.f_globals, dict(one.f_locals)
    if isinstance(function, str) and function:
        try:
            one = frame_pick.pick(frames_, function, strict=False)
        except LookupError:  # no such frame: the user's frames
            pass
        else:
            return one.f_globals, dict(one.f_locals)
    main = sys.modules.get("__main__")
    module_globals: dict[str, Any] = dict(vars(main)) if main is not None else {}
    user = [f for f in frames_ if frames.user_file(f.f_code.co_filename)]
    merged: dict[str, Any] = {}
    for one in reversed(user):  # outermost first: inner frames overwrite
        merged.update(one.f_locals)
    globals_ = user[0].f_globals if user else (vars(main) if main is not None else {})
    return globals_, {**module_globals, **merged}


class Asked:
    """An eval request, checked: the code, its time, and the optional frame (``frame_pick``),
    function (prefer its frame) and key to keep a tensor under."""

    def __init__(self, expr: str, timeout: float) -> None:
        self.expr, self.timeout = expr, timeout
        self.frame: object = None
        self.function: object = None
        self.keep: object = None
        self.at: int | None = None  # read after this step (``at_step``)


def evaluate(asked: Asked, spawn: Spawn) -> dict[str, Any]:
    """``evaluate_now``, the reply carrying ``seq``, the rank's collective count where it
    was read; with ``asked.at``, after the first optimizer step ending at that count or
    later, the main thread held there meanwhile (``at_step``)."""
    from rankdebug.runtime import at_step

    if asked.at is None:
        return dict(evaluate_now(asked, spawn), seq=at_step.seq())
    with at_step.at_step(asked.at, asked.timeout) as count:
        if count is None:
            return {"event": "error", "no_step": True, "seq": at_step.seq(), "message": (
                f"no optimizer step came within {asked.timeout:g} s (at collective "
                f"#{asked.at} or later): read it now with --now, or give a longer --timeout")}
        return dict(evaluate_now(asked, spawn), seq=count, at={"seq": count})


def evaluate_now(asked: Asked, spawn: Spawn) -> dict[str, Any]:
    """Run the code (see ``repl``) in a thread ``spawn`` starts: its value's repr and type
    (with a summary for a tensor or an array) and what it printed, or why not, within its
    time; past it, the code is stopped (``interrupt``)."""
    from rankdebug.runtime import repl, summary

    expr, timeout = asked.expr, asked.timeout
    frame, function, keep = asked.frame, asked.function, asked.keep

    if interrupt.busy() >= interrupt.MAX_RUNNING:
        return {"event": "error", "message": (
            f"{interrupt.busy()} earlier evaluations still run in this rank, each in a call "
            "that cannot be interrupted; try again once they return")}
    result: dict[str, Any] = {}

    def run() -> None:
        with interrupt.window():
            try:
                globals_, locals_ = namespace(frame, function)
                value, output = repl.run(expr, globals_, locals_)
                text = repl.clip(repr(value))
                found: dict[str, Any] = {"event": "result", "text": text,
                                         "type": type(value).__name__}
                if output:
                    found["output"] = output
                if isinstance(value, (bool, int, float)) and (
                        not isinstance(value, int) or abs(value) < 2 ** 53):
                    found["number"] = value if math.isfinite(value) else str(value)
                described, elements = summary.summarize(value)
                if described is not None:
                    found["summary"] = described
                    kept.keep(keep, elements, kept.stopped_main, spawn)
                result.update(found)
            except repl.EvalError as exc:
                result.update(event="error", message=str(exc))
                if exc.line is not None:
                    result["line"] = exc.line
            except frame_pick.Ambiguous as exc:
                result.update(event="error", message=str(exc), candidates=exc.candidates)
            except LookupError as exc:  # no such frame (an index, FILE:LINE or a name)
                result.update(event="error", message=str(exc).strip("'\""), no_frame=True)
            except BaseException as exc:  # the repr raised, or SystemExit: the user's code
                result.update(event="error", message=f"{type(exc).__name__}: {exc}")

    one = interrupt.start("rankdebug-handler-eval", run, spawn)
    if one.done.wait(timeout):
        return result or {"event": "error", "message": "the evaluation was cut short"}
    interrupt.stop(one, spawn)
    return {"event": "error",
            "message": f"no result after {timeout:g} s; {interrupt.describe(one)}"}


def digest(key: str, ranges: list[list[int]], stats: bool) -> dict[str, Any]:
    """Checksums (or elements) of ranges of a value an ``eval`` kept."""
    from rankdebug.runtime import summary

    try:
        elements = kept.get(key)
    except LookupError as exc:
        return {"event": "error", "message": str(exc).strip("'\"")}
    return {"event": "digest", "ranges": summary.digest(elements, ranges, stats)}


def release(key: str) -> dict[str, Any]:
    """Drop what an ``eval`` kept (its compare is done)."""
    return {"event": "released", "released": kept.release(key)}

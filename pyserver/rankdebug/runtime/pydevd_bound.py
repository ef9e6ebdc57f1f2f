"""Breakpoints bound to ranks, read by the rank's own debugger where no gate stands in front
of it: a rank that was not chosen and starts its debugger later (an armed rank's ``attach``)
is reached by its client straight, so ``ranks 3`` would reach pydevd as a Python condition
that never holds. pydevd's ``setBreakpoints`` handler is wrapped to rewrite the request as a
gate does (``bound_breaks.for_rank``) and its answer back to one entry per breakpoint sent.
Pure Python, 3.9 and later; debugpy is imported by then."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Optional


def install(rank: int, local_rank: Optional[int]) -> bool:
    """Wrap pydevd's handler once; False where this pydevd has no such handler."""
    try:
        from _pydevd_bundle import pydevd_process_net_command_json as json_commands
        from _pydevd_bundle.pydevd_comm_constants import CMD_RETURN
        from _pydevd_bundle.pydevd_net_command import NetCommand
    except ImportError:
        return False
    processor = getattr(json_commands, "PyDevJsonCommandProcessor", None)
    original = getattr(processor, "on_setbreakpoints_request", None)
    if processor is None or original is None:
        return False
    if getattr(original, "rankdebug_bound", False):
        return True
    from rankdebug.runtime import bound_breaks

    def on_setbreakpoints_request(self: Any, py_db: Any, request: Any) -> Any:
        arguments = request.arguments
        sent = list(getattr(arguments, "breakpoints", None) or [])
        mine, mapping = bound_breaks.for_rank({"breakpoints": sent}, rank, local_rank)
        if mapping is None:
            return original(self, py_db, request)
        arguments.breakpoints = mine["breakpoints"]
        answer = original(self, py_db, request)
        said = getattr(answer, "as_dict", None)
        if not isinstance(said, dict) or not isinstance(said.get("body"), dict):
            return answer
        reply = {k: v for k, v in said.items() if k not in ("pydevd_cmd_id", "seq")}
        reply["body"] = bound_breaks.client_body(said["body"], mapping, None)
        return NetCommand(CMD_RETURN, 0, reply, is_json=True)

    on_setbreakpoints_request.rankdebug_bound = True  # type: ignore[attr-defined]
    processor.on_setbreakpoints_request = on_setbreakpoints_request
    return True

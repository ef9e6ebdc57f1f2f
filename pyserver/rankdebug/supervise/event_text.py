"""``rankdebug launch``'s events as lines for a person (without ``--json``): one line each,
in the user's terms."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def human(event: dict[str, Any]) -> str:
    """One event as a line for a person (without --json)."""
    kind = event.get("event")
    if kind == "job":
        ranks = event.get("ranks")
        which = ", ".join(map(str, ranks)) if ranks is not None else event.get("rank_spec")
        armed = (f"; every rank armed (rankdebug attach|eval|stacks {event.get('job')} …)"
                 if event.get("armed") else "")
        if not which:
            return f"job {event.get('job')}: no rank debugged from the start{armed}"
        return (f"job {event.get('job')}: debugging rank(s) {which} "
                f"({event.get('attach_mode')}){armed}")
    line = _LINES.get(str(kind))
    if line is not None:
        return line(event)
    return " ".join(f"{k}={v}" for k, v in event.items())


def _paused(e: dict[str, Any]) -> str:
    waiting = f", waiting in {e['waiting']}" if e.get("waiting") else ""
    return (f"rank {e.get('rank')}: paused ({e.get('reason')}{waiting}) at "
            f"{e.get('file')}:{e.get('line')} in {e.get('function')}")


# The other events, as a line for a person.
_LINES: dict[str, Callable[[dict[str, Any]], str]] = {
    "listening": lambda e: (f"rank {e.get('rank')} (pid {e.get('pid')}): attach a debugger "
                            f"to {e.get('host')}:{e.get('port')}"),
    "attached": lambda e: f"rank {e.get('rank')}: debugger attached",
    "role": lambda e: f"rank {e.get('rank')}: a Ray actor, role {e.get('role')}",
    "hang": lambda e: (f"the job looks stuck: {e.get('why')} (rankdebug diagnose "
                       f"{e.get('job')} says more)"),
    "hang_over": lambda e: f"the job makes progress again, after {e.get('seconds')} s",
    "exited": lambda e: f"job ended with exit status {e.get('code')}",
    "stopped": _paused,
    "continued": lambda e: f"rank {e.get('rank')}: running",
    "arrived": lambda e: f"{e.get('command')}: ranks {e.get('ranks')} have all arrived",
    "blocked": lambda e: f"rank {e.get('rank')}: waits in {e.get('in')}",
    "raised": lambda e: (f"rank {e.get('rank')} raised {e.get('exception')} at "
                         f"{e.get('file')}:{e.get('line')}; held for inspection"),
}

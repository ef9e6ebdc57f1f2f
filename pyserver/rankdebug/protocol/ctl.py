"""What the job's control socket (``ctl.sock``) and ``--control``'s stdin may carry, declared
once and checked at the boundary, before anything acts on it.

Two kinds of line arrive there:

- a **rank's report** (``{"event": "listening", "rank": 1, ...}``, sent by
  ``runtime.debug.send``): never answered, unless it is malformed;
- a **command** of a client (``{"command": "pause", "ranks": "0-3"}``): answered with one
  line, ``{"ok": true, ...}`` or ``{"error": {"message": ...}}``.

A line that is neither, or whose fields have the wrong types, is answered with that error
and changes nothing. ``check`` says what is wrong in one sentence; the job's loop never sees
a message it did not pass.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rankdebug.ranks import MAX_RANK

Check = Callable[[object], bool]


def _int(lo: int, hi: int) -> Check:
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi


def _text(most: int) -> Check:
    return lambda v: isinstance(v, str) and len(v) <= most and "\0" not in v


def _maybe(check: Check) -> Check:
    return lambda v: v is None or check(v)


def _bool(v: object) -> bool:
    return isinstance(v, bool)


def _number(v: object) -> bool:
    return (isinstance(v, (int, float)) and not isinstance(v, bool)
            and math.isfinite(v))


def _ranks(v: object) -> bool:
    """A rank spec as a client sends it; its grammar is checked by ``rankdebug.ranks``."""
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return 0 <= v <= MAX_RANK
    if isinstance(v, list):
        return len(v) <= MAX_RANK + 1 and all(_RANK(r) for r in v)
    return _text(1 << 16)(v)


_RANK = _int(0, MAX_RANK)
_PID = _int(1, (1 << 31) - 1)
_PATH = _text(4096)
_WORD = _text(200)
_SAID = _text(10_000)


@dataclass(frozen=True)
class Shape:
    """One message: the fields it must have and those it may have, each with its check.
    Fields not listed are ignored (a newer peer may say more)."""

    required: Mapping[str, tuple[Check, str]]
    optional: Mapping[str, tuple[Check, str]]


def _shape(required: Mapping[str, tuple[Check, str]] | None = None,
           **optional: tuple[Check, str]) -> Shape:
    return Shape(required or {}, optional)


_RANK_FIELD = (_RANK, f"a rank number from 0 to {MAX_RANK:,}")
_RANKS_FIELD = (_ranks, "a rank spec such as '1,3' or '0-3', a rank number or a list of them")
_COMMON = {"pid": (_maybe(_PID), "a process id"), "node": (_maybe(_WORD), "a node name"),
           "role": (_maybe(_WORD), "a short text")}

# What ranks report (runtime.debug.send, runtime.hold): every field the supervisor reads.
EVENTS: dict[str, Shape] = {
    "started": _shape({"rank": _RANK_FIELD}, **_COMMON,
                      local_rank=(_maybe(_RANK), "a local rank number"),
                      world_size=(_maybe(_int(1, MAX_RANK + 1)), "a world size"),
                      chosen=(_bool, "true or false")),
    "listening": _shape({"rank": _RANK_FIELD}, **_COMMON,
                        host=(_maybe(_WORD), "a host"),
                        port=(_maybe(_int(0, 65535)), "a TCP port")),
    "attached": _shape({"rank": _RANK_FIELD}, **_COMMON),
    "exit": _shape({"rank": _RANK_FIELD}, **_COMMON),
    "armed": _shape({"rank": _RANK_FIELD}, **_COMMON,
                    signal=(_maybe(_int(1, 64)), "a signal number"),
                    wait=(_bool, "true or false")),
    "handler": _shape({"rank": _RANK_FIELD}, **_COMMON,
                      socket=(_maybe(_PATH), "a socket path"),
                      armed=(_bool, "true or false")),
    "adapter": _shape({"rank": _RANK_FIELD}, **_COMMON),
    "raised": _shape({"rank": _RANK_FIELD}, **_COMMON,
                     exception=(_maybe(_SAID), "an exception name"),
                     message=(_maybe(_SAID), "a text"),
                     file=(_maybe(_PATH), "a path"),
                     line=(_maybe(_int(0, 1 << 30)), "a line number"),
                     function=(_maybe(_SAID), "a function name")),
}

# What clients ask (README: "Outside VS Code"); group commands go on to supervise.together.
COMMANDS: dict[str, Shape] = {
    "continue": _shape(ranks=_RANKS_FIELD),
    "pause": _shape(ranks=_RANKS_FIELD),
    "step": _shape(ranks=_RANKS_FIELD, kind=(_WORD, "over, in or out")),
    "run-to": _shape({"file": (_PATH, "an absolute path"),
                      "line": (_int(1, 1 << 30), "a line number from 1")},
                     ranks=_RANKS_FIELD),
    "stop-mode": _shape({"mode": (_WORD, "together or alone")}),
    "attach": _shape({"rank": _RANK_FIELD}),
    "stop": _shape(),
    "ping": _shape(),  # a health check: answered {"ok": true}
}


class Bad(ValueError):
    """A line the channel cannot use; its message is the answer's."""


def _names(table: Mapping[str, Shape]) -> str:
    return ", ".join(sorted(table))


def _fields(what: str, msg: Mapping[str, Any], shape: Shape) -> None:
    for name, (_, want) in shape.required.items():
        if name not in msg:
            raise Bad(f"{what} needs {name} ({want})")
    for name, (check, want) in {**shape.required, **shape.optional}.items():
        if name in msg and not check(msg[name]):
            raise Bad(f"{what}: {name} must be {want}, not {_short(msg[name])}")


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check(msg: Mapping[str, Any]) -> tuple[str, str]:
    """``("command", NAME)`` or ``("event", NAME)`` for a message the job may act on;
    raises Bad with the answer's message for anything else."""
    if "command" in msg and "event" not in msg:
        name = msg["command"]
        if not isinstance(name, str) or name not in COMMANDS:
            raise Bad(f"unknown command {_short(name)} (the commands: {_names(COMMANDS)})")
        _fields(name, msg, COMMANDS[name])
        return "command", name
    if "event" in msg and "command" not in msg:
        name = msg["event"]
        if not isinstance(name, str) or name not in EVENTS:
            raise Bad(f"unknown event {_short(name)}")
        _fields(f"event {name}", msg, EVENTS[name])
        return "event", name
    raise Bad("a message is a JSON object with a command (one of "
              f"{_names(COMMANDS)}), e.g. {{\"command\": \"pause\", \"ranks\": \"0-3\"}}")


def check_command(msg: Mapping[str, Any]) -> str:
    """The command a line of ``--control``'s stdin asks for; raises Bad otherwise."""
    if "event" in msg:
        raise Bad("a line of --control is a command, e.g. {\"command\": \"pause\"}")
    return check(msg)[1]


def error(message: str) -> dict[str, Any]:
    """The one error answer of this channel."""
    return {"error": {"message": message}}

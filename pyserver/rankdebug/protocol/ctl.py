"""What the job's control socket (``ctl.sock``) and ``--control``'s stdin may carry, declared
once and checked at the boundary, before anything acts on it.

Two kinds of line arrive there:

- a **rank's report** (``{"event": "listening", "rank": 1, ...}``, sent by
  ``runtime.reporting.send``): never answered, unless it is malformed;
- a **command** of a client (``{"command": "pause", "ranks": "0-3"}``): answered with one
  line, ``{"ok": true, ...}`` or ``{"error": {"message": ...}}``.

A line that is neither, or whose fields have the wrong types, is answered with that error
and changes nothing. ``check`` says what is wrong in one sentence; the job's loop never sees
a message it did not pass. Fields are declared in ``protocol.fields``' vocabulary, bounded
(ranges, most lengths, rank specs); a field not declared is let through unchecked (a newer
peer may say more). ``scripts/gen_wire.py`` writes ``docs/schema/ctl.schema.json`` and the
extension's ``core/generated/ctl.ts`` (commands, reports, ``REPLIES``) from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rankdebug.protocol.fields import Field, Message, Shape, fault
from rankdebug.ranks import MAX_RANK

_PATH, _WORD, _SAID = 4096, 200, 10_000  # the most characters of a path, a name, a text


def _rank(doc: str) -> Field:
    return Field("int", doc, lo=0, hi=MAX_RANK, want=f"a rank number from 0 to {MAX_RANK:,}")


def _maybe(kind: str, want: str, doc: str = "", **bounds: Any) -> Field:
    """A field a rank may leave out or say null."""
    return Field(kind, doc or want, optional=True, null=True, want=want, **bounds)


def _flag(doc: str) -> Field:
    return Field("bool", doc, optional=True, want="true or false")


_RANKS = Field("ranks", "the ranks to act on: every chosen rank when left out",
               optional=True, lo=0, hi=MAX_RANK, most=1 << 16,
               want="a rank spec such as '1,3' or '0-3', a rank number or a list of them")
# What every report may say besides its rank (runtime.reporting.send).
_COMMON = {"rank": _rank("the rank that reports"),
           "pid": _maybe("int", "a process id", "its process id", lo=1, hi=(1 << 31) - 1),
           "node": _maybe("str", "a node name", "the node it runs on (`nodeN`), when not the "
                          "supervisor's", most=_WORD),
           "role": _maybe("str", "a short text", "a Ray actor rank's role", most=_WORD)}


def _report(tag: str, doc: str, **fields: Field) -> Message:
    return Message(tag, doc, {**_COMMON, **fields}, more=True)


def _command(tag: str, doc: str, **fields: Field) -> Message:
    return Message(tag, doc, fields, more=True)


# What ranks report (runtime.reporting.send, runtime.hold): every field the supervisor reads.
EVENTS: dict[str, Message] = {m.tag: m for m in (
    _report("started", "The rank's process runs (chosen: debugged from the start).",
            local_rank=_maybe("int", "a local rank number", lo=0, hi=MAX_RANK),
            world_size=_maybe("int", "a world size", lo=1, hi=MAX_RANK + 1),
            chosen=_flag("whether the rank is debugged from the start")),
    _report("listening", "The rank's debug port accepts connections.",
            host=_maybe("str", "a host", most=_WORD),
            port=_maybe("int", "a TCP port", lo=0, hi=65535)),
    _report("attached", "A client attached to the rank's debugger."),
    _report("exit", "The rank's script finished."),
    _report("armed", "The rank waits for an attach signal.",
            signal=_maybe("int", "a signal number", lo=1, hi=64),
            wait=_flag("whether the rank waits for the attach")),
    _report("handler", "The rank serves its control socket (attach, eval, stacks).",
            socket=_maybe("str", "a socket path", most=_PATH),
            armed=_flag("whether it can be attached later")),
    _report("adapter", "The rank's debug adapter runs."),
    _report("raised", "The rank is held alive at an uncaught exception.",
            exception=_maybe("str", "an exception name", most=_SAID),
            message=_maybe("str", "a text", most=_SAID),
            file=_maybe("str", "a path", most=_PATH),
            line=_maybe("int", "a line number", lo=0, hi=1 << 30),
            function=_maybe("str", "a function name", most=_SAID)),
)}

# What clients ask (README: "Outside VS Code"); group commands go on to supervise.together.
COMMANDS: dict[str, Message] = {m.tag: m for m in (
    _command("continue", "Run the ranks on.", ranks=_RANKS),
    _command("pause", "Pause the ranks.", ranks=_RANKS),
    _command("step", "Step the ranks together.", ranks=_RANKS,
             kind=Field("str", "over, in or out", optional=True, most=_WORD)),
    _command("run-to", "Run the ranks to a line.",
             file=Field("str", "an absolute path", most=_PATH),
             line=Field("int", "a line number from 1", lo=1, hi=1 << 30), ranks=_RANKS),
    _command("stop-mode", "Whether a rank's stop stops the others.",
             mode=Field("str", "together or alone", most=_WORD)),
    _command("attach", "Start the rank's debugger now (an armed rank, or --attach hit).",
             rank=_rank("the rank")),
    _command("stop", "End the job."),
    _command("ping", "A health check: answered {\"ok\": true}."),
)}

# The one answer line of each command.
REPLIES: dict[str, Shape] = {s.name: s for s in (
    Shape("Done", "A command carried out.", {
        "ok": Field("bool", "always true"),
        "ranks": Field("[int]", "the ranks a group command acted on", optional=True)}),
    Shape("Refused", "A line the job cannot use, or a command it could not carry out; the "
          "job goes on.", {"error": Field("Problem")}),
    Shape("Problem", "What went wrong.", {"message": Field("str", "one sentence")}),
)}


class Bad(ValueError):
    """A line the channel cannot use; its message is the answer's."""


def _names(table: Mapping[str, Message]) -> str:
    return ", ".join(sorted(table))


def _fields(what: str, msg: Mapping[str, Any], one: Message) -> None:
    name = fault(msg, one.fields)
    if name is None:
        return
    if name not in msg:
        raise Bad(f"{what} needs {name} ({one.fields[name].says})")
    raise Bad(f"{what}: {name} must be {one.fields[name].says}, not {_short(msg[name])}")


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

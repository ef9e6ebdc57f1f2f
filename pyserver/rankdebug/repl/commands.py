"""The terminal debugger's commands: one typed line → one ``Command``, or a one-line error
that says where in the line it is (``BadCommand``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

# name -> (aliases, what it takes, what it does): the parser's table and ``help``'s text.
TABLE: dict[str, tuple[tuple[str, ...], str, str]] = {
    "list": (("l", "ls"), "", "the chosen ranks: state, coordinates, frame (* current)"),
    "ranks": (("r",), "[SPEC]", "choose the current ranks: 0,2  1-3  all  tp=0  'pp=1 tp=0-3'"),
    "continue": (("c", "cont"), "", "run the current ranks until they stop again"),
    "next": (("n",), "", "step over, in the current ranks"),
    "step": (("s",), "", "step into, in the current ranks"),
    "finish": (("fin", "return"), "", "step out of the current function"),
    "pause": (("stop",), "", "pause the current ranks where they are"),
    "where": (("bt", "w", "backtrace"), "", "the current ranks' stacks, alike ranks once"),
    "p": (("print", "pp"), "EXPR", "evaluate EXPR in each current rank's frame, grouped"),
    "attach": (("a",), "SPEC", "debug more ranks of the job: 4-7, tp=0 (armed ranks start "
                               "their debugger)"),
    "break": (("b",), "[FILE:]LINE [ranks SPEC] [if COND]", "set a breakpoint"),
    "clear": (("cl",), "[N | FILE:LINE]", "delete breakpoint N, those on a line, or all"),
    "info": (("i",), "breakpoints", "list the breakpoints"),
    "help": (("h", "?"), "", "this list"),
    "quit": (("q", "exit"), "", "end the job this started (detach from an attached one)"),
}
NAMES: dict[str, str] = {alias: name for name, (aliases, _, _) in TABLE.items()
                         for alias in (name, *aliases)}
NO_ARGS = frozenset({"list", "continue", "next", "step", "finish", "pause", "where", "help",
                     "quit"})
# ``b FILE:LINE ranks SPEC if COND``: the place, then the optional parts in that order.
_BREAK = re.compile(r"(?P<place>(?:.+?:)?\d+)(?:\s+(?P<ranks>ranks?\s+.+?))?"
                    r"(?:\s+if\s+(?P<cond>.+))?", re.S)
_PLACE = re.compile(r"(?:(?P<file>.+):)?(?P<line>\d+)")


class BadCommand(ValueError):
    """A line that is no command; the message says why and at which column."""


@dataclass(frozen=True)
class Command:
    name: str  # the canonical name (TABLE's key)
    arg: str = ""  # the rest of the line, stripped


@dataclass(frozen=True)
class BreakSpec:
    """``b [FILE:]LINE [ranks SPEC] [if COND]``: FILE None means the current frame's."""

    file: str | None
    line: int
    ranks: str | None
    condition: str | None


def parse(text: str) -> Command | None:
    """The command on ``text``; None for an empty line. Raises BadCommand."""
    stripped = text.strip()
    if not stripped:
        return None
    word, _, rest = stripped.partition(" ")
    name = NAMES.get(word.lower())
    if name is None:
        raise BadCommand(f"unknown command {_short(word)} (column {_col(text, word)}); "
                         "`help` lists the commands")
    rest = rest.strip()
    if name in NO_ARGS and rest:
        raise BadCommand(f"{name} takes nothing (column {_col(text, rest)}: {_short(rest)}); the "
                         "current ranks are chosen with `ranks SPEC`")
    if name == "p" and not rest:
        raise BadCommand("p needs an expression, e.g. p loss.item()")
    if name == "attach" and not rest:
        raise BadCommand("attach needs the ranks, e.g. attach 4-7 or attach tp=0")
    if name == "info" and rest.lower() not in ("b", "break", "breakpoints"):
        raise BadCommand("info takes breakpoints (info b)")
    if name == "break" and rest:
        parse_break(rest)  # its errors now, before anything acts on it
    return Command(name, rest)


def parse_break(text: str) -> BreakSpec:
    """``[FILE:]LINE [ranks SPEC] [if COND]``. Raises BadCommand."""
    m = _BREAK.fullmatch(text.strip())
    place = _PLACE.fullmatch(m.group("place")) if m else None
    if m is None or place is None:
        raise BadCommand(f"b takes FILE:LINE or LINE, then optionally `ranks SPEC` and `if "
                         f"COND` (e.g. b train.py:42 ranks 0,1 if step > 3), not {_short(text)}")
    line = int(place.group("line"))
    if line < 1:
        raise BadCommand("a line number starts at 1")
    bound = m.group("ranks")
    spec = bound.split(None, 1)[1].strip() if bound else None
    cond = m.group("cond").strip() if m.group("cond") else None
    return BreakSpec(place.group("file"), line, spec, cond)


def _short(text: str) -> str:
    """``text`` quoted for a message, cut when long (a pasted blob is no command)."""
    return repr(text) if len(text) <= 60 else repr(text[:57]) + f"… ({len(text):,} characters)"


def _col(text: str, part: str) -> int:
    return text.find(part) + 1


def help_text() -> str:
    width = max(len(f"{n} {a}") for n, (_, a, _) in TABLE.items())
    lines = []
    for name, (aliases, args, what) in TABLE.items():
        short = f" ({', '.join(aliases)})" if aliases else ""
        lines.append(f"  {f'{name} {args}'.strip().ljust(width)}  {what}{short}")
    return "\n".join(lines)

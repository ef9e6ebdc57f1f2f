"""What the terminal debugger prints: ranks, stops, stacks and values, alike ranks once
(``ranks 0,2: …``), as ``rankdebug stacks`` and ``compare`` group them."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from rankdebug.jobs.analysis import compare
from rankdebug.jobs.coords_value import text as coords_text
from rankdebug.ranks import label


class RankView(Protocol):
    """What ``arrivals`` reads of a rank (``views.RankView``)."""

    @property
    def rank(self) -> int: ...
    @property
    def state(self) -> str: ...
    @property
    def reason(self) -> str | None: ...
    @property
    def why(self) -> str | None: ...
    @property
    def waiting_in(self) -> str | None: ...
    @property
    def where(self) -> Where | None: ...


class Breakpoint(Protocol):
    """What ``break_line`` reads of a breakpoint (``breaks.Breakpoint``)."""

    @property
    def number(self) -> int: ...
    @property
    def path(self) -> str: ...
    @property
    def line(self) -> int: ...
    @property
    def ranks(self) -> list[int] | None: ...
    @property
    def condition(self) -> str | None: ...


@dataclass(frozen=True)
class Where:
    """A frame: ``file:line in function``."""

    file: str | None
    line: int | None
    function: str | None

    @classmethod
    def of(cls, frame: dict[str, Any]) -> Where:
        source = frame.get("source") if isinstance(frame.get("source"), dict) else {}
        name = frame.get("name")
        if isinstance(name, str):  # debugpy marks the raising frame at an exception stop
            name = name.removesuffix(" (Current frame)")
        line = frame.get("line")
        path = (source or {}).get("path")
        return cls(path if isinstance(path, str) else None,
                   line if isinstance(line, int) else None,
                   name if isinstance(name, str) else None)

    def text(self, cwd: str) -> str:
        place = short(self.file, cwd) if self.file else "?"
        return f"{place}:{self.line if self.line is not None else '?'} in {self.function or '?'}"


@dataclass(frozen=True)
class Row:
    """One line of ``list``."""

    rank: int
    current: bool
    state: str
    reason: str | None
    why: str | None
    waiting_in: str | None
    coords: dict[str, int] | None
    where: Where | None


def short(path: str | None, cwd: str) -> str:
    """``path`` relative to ``cwd`` when it is under it."""
    if not path:
        return "?"
    rel = os.path.relpath(path, cwd) if os.path.isabs(path) else path
    return path if rel.startswith("..") else rel


def last_line(text: str, most: int = 500) -> str:
    """A traceback's last line (``NameError: name 'x' is not defined``), cut at ``most``."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    line = lines[-1] if lines else text
    return line if len(line) <= most else f"{line[:most]}… ({len(line):,} characters)"


def state_text(state: str, reason: str | None, waiting_in: str | None,
               why: str | None = None) -> str:
    if state == "stopped":
        return f"waiting in {waiting_in}" if waiting_in else f"stopped ({reason})"
    if state == "blocked":
        return f"blocked in {waiting_in}"
    if state == "waiting":
        return "not started (set breakpoints, then c)"
    if state in ("refused", "gone", "exited") and why:
        return f"{ {'refused': 'not held', 'gone': 'gone', 'exited': 'exited'}[state]}: {why}"
    return state


def table(rows: Sequence[Row], cwd: str) -> list[str]:
    if not rows:
        return ["no chosen rank yet"]
    states = [state_text(r.state, r.reason, r.waiting_in, r.why) for r in rows]
    coords = [coords_text(r.coords) for r in rows]
    ws, wc = max(map(len, states)), max(map(len, coords))
    width = max(len(str(r.rank)) for r in rows)
    out = []
    for row, state, where in zip(rows, states, coords, strict=True):
        mark = "*" if row.current else " "
        frame = row.where.text(cwd) if row.where is not None and row.state == "stopped" else ""
        parts = [f"{mark} rank {str(row.rank).ljust(width)}", state.ljust(ws)]
        if wc:
            parts.append(where.ljust(wc))
        parts.append(frame)
        out.append("  ".join(parts).rstrip())
    return out


def stop_line(rank: int, reason: str | None, waiting_in: str | None, where: Where | None,
              cwd: str) -> str:
    what = f"paused, waiting in {waiting_in}" if waiting_in else f"stopped ({reason})"
    return f"rank {rank}: {what} at {where.text(cwd) if where else '?'}"


def arrivals(views: Sequence[RankView], blocked: dict[int, str], cwd: str) -> list[str]:
    """Where the ranks of a group command are now, alike ranks on one line."""
    groups: dict[str, list[int]] = {}
    for v in views:
        if v.rank in blocked and v.state != "stopped":
            what = f"blocked in {blocked[v.rank]} (its peers are stopped)"
        elif v.state == "stopped":
            place = v.where.text(cwd) if v.where else "?"
            what = (f"paused, waiting in {v.waiting_in} at {place}" if v.waiting_in
                    else f"stopped ({v.reason}) at {place}")
        elif v.state == "running":
            what = "still running (`pause` stops it)"
        else:
            what = state_text(v.state, v.reason, v.waiting_in, v.why)
        groups.setdefault(what, []).append(v.rank)
    return [f"{label(rs)}: {what}" for what, rs in
            sorted(groups.items(), key=lambda kv: (-len(kv[1]), min(kv[1])))]


def stacks(read: Sequence[tuple[int, list[Where] | str]], cwd: str) -> list[str]:
    """The ranks' stacks, innermost first; ranks with the same stack once."""
    groups: dict[tuple[Where, ...] | str, list[int]] = {}
    for rank, frames in read:
        groups.setdefault(frames if isinstance(frames, str) else tuple(frames), []).append(rank)
    out = []
    for key, rs in sorted(groups.items(), key=lambda kv: (-len(kv[1]), min(kv[1]))):
        if isinstance(key, str):
            out.append(f"{label(rs)}: {key}")
            continue
        out.append(f"{label(rs)}:")
        out.extend(f"  #{i} {w.text(cwd)}" for i, w in enumerate(key))
    return out


def values(results: list[dict[str, Any]]) -> list[str]:
    """Answers grouped by value, the largest group first (``compare.group``)."""
    if not results:
        return []
    out = []
    for g in compare.group(results):
        head = f"{label(g.ranks)}: "
        lines = g.text.splitlines() or [""]
        out.append(head + lines[0])
        out.extend(" " * len(head) + ln for ln in lines[1:])
    return out


def break_line(bp: Breakpoint, cwd: str) -> str:
    where = f"breakpoint {bp.number} at {short(bp.path, cwd)}:{bp.line}"
    if bp.ranks is not None:
        where += f", {label(bp.ranks)}"
    if bp.condition:
        where += f", if {bp.condition}"
    return where

"""The terminal debugger's breakpoints: ``b FILE:LINE [ranks R] [if COND]`` and ``clear``,
each file's set sent to every held rank's DAP connection (a rank-bound one only to its
ranks: an armed rank attached later has no gate to read a ``ranks R`` condition)."""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from rankdebug.repl import render
from rankdebug.repl.commands import BadCommand, BreakSpec, parse_break
from rankdebug.repl.link import Link, LinkError
from rankdebug.repl.views import RankView, SessionError

MAX_SOURCE = 64 << 20  # a breakpoint's file is read to count its lines


@dataclass
class Breakpoint:
    number: int
    path: str
    line: int
    ranks: list[int] | None  # bound to these ranks; None: every rank
    condition: str | None

    def dap(self) -> dict[str, Any]:
        """The DAP entry. A binding to ranks is kept here, not sent: each rank is sent only
        the breakpoints bound to it, which every endpoint understands (a chosen rank's gate,
        and the plain debugpy of an armed rank started later, which would take ``ranks 3``
        for a Python condition)."""
        out: dict[str, Any] = {"line": self.line}
        if self.condition:
            out["condition"] = self.condition
        return out


class Breaks:
    """The breakpoints over the session's ranks: ``views`` (shared, read for the held links
    and where the current ranks stand), ``chosen`` (the current ranks) and ``resolve`` (the
    held ranks a spec names; raises SessionError)."""

    def __init__(self, cwd: str, views: dict[int, RankView], chosen: Callable[[], list[int]],
                 resolve: Callable[[str], list[int]]) -> None:
        self.cwd, self.views, self.chosen, self.resolve = cwd, views, chosen, resolve
        self.items: list[Breakpoint] = []
        self._next = 1

    def add(self, text: str) -> list[str]:
        spec = parse_break(text)
        path = self._path(spec)
        bound = self.resolve(spec.ranks) if spec.ranks else None
        if any(b.path == path and b.line == spec.line for b in self.items):
            raise SessionError(f"{render.short(path, self.cwd)}:{spec.line} has a breakpoint "
                               "already (`clear` it first)")
        bp = Breakpoint(self._next, path, spec.line, bound, spec.condition)
        self._next += 1
        self.items.append(bp)
        answers = self._push(path)
        lines = [render.break_line(bp, self.cwd)]
        for rank, message in answers:
            lines.append(f"  rank {rank}: {message}")
        return lines

    def _path(self, spec: BreakSpec) -> str:
        if spec.file is None:
            here = next((self.views[r].where for r in self.chosen()
                         if self.views[r].where is not None), None)
            if here is None or here.file is None:
                raise SessionError("b LINE needs a current rank stopped in a file; give "
                                   "FILE:LINE")
            path = here.file
        else:
            path = os.path.realpath(os.path.join(self.cwd, os.path.expanduser(spec.file)))
        try:
            if not os.path.isfile(path):  # a folder, a device, a pipe: no lines to stop at
                raise SessionError(f"{spec.file or path} is not a file")
            if os.path.getsize(path) > MAX_SOURCE:
                raise SessionError(f"{spec.file or path} is too large for a source file")
            with open(path, "rb") as f:
                count = f.read().count(b"\n") + 1
        except OSError as exc:
            raise SessionError(f"cannot read {spec.file or path}: {exc.strerror or exc}") \
                from None
        if spec.line > count:
            raise SessionError(f"{render.short(path, self.cwd)} has {count} lines; no line "
                               f"{spec.line}")
        return path

    def clear(self, arg: str) -> list[str]:
        if not arg:
            gone = list(self.items)
        elif arg.isdigit():
            gone = [b for b in self.items if b.number == int(arg)]
        else:
            try:
                spec = parse_break(arg)
            except BadCommand:
                raise SessionError("clear takes a breakpoint number, FILE:LINE, or nothing "
                                   "(all)") from None
            path = self._path(spec)
            gone = [b for b in self.items if b.path == path and b.line == spec.line]
        if not gone:
            raise SessionError(f"no breakpoint {arg} (info b lists them)" if arg else
                               "no breakpoints to clear")
        self.items = [b for b in self.items if b not in gone]
        for path in sorted({b.path for b in gone}):
            self._push(path)
        return [f"deleted breakpoint {b.number} at {render.short(b.path, self.cwd)}:{b.line}"
                for b in gone]

    def _push(self, path: str) -> list[tuple[int, str]]:
        """Send ``path``'s breakpoints to every held rank; what a rank said against one."""
        links = [v.link for v in self.views.values() if v.link is not None and v.live]

        def one(link: Link) -> list[tuple[int, str]]:
            return self.send(link, path)

        with ThreadPoolExecutor(max_workers=min(32, len(links) or 1)) as pool:
            return [said for got in pool.map(one, links) for said in got]

    def send(self, link: Link, path: str | None) -> list[tuple[int, str]]:
        """Send ``path``'s breakpoints (None: every file's) to ``link``."""
        paths = [path] if path is not None else sorted({b.path for b in self.items})
        said = []
        for p in paths:
            mine = [b for b in self.items if b.path == p
                    and (b.ranks is None or link.rank in b.ranks)]
            try:
                body = link.request("setBreakpoints", {"source": {"path": p},
                                                       "breakpoints": [b.dap() for b in mine]})
            except LinkError as exc:
                said.append((link.rank, str(exc)))
                continue
            for b, answer in zip(mine, body.get("breakpoints") or [], strict=False):
                if isinstance(answer, dict) and not answer.get("verified") \
                        and answer.get("message"):
                    said.append((link.rank, f"breakpoint {b.number}: {answer['message']}"))
        return said

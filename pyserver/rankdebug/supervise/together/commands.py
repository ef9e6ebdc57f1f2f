"""The group commands on a set of chosen ranks at once: ``continue``, ``pause``, ``step``
(``arrived`` when every rank has stopped again), ``run-to`` (TotalView's barrier point: every
rank runs to the line and holds there) and ``stop-mode``."""

from __future__ import annotations

import os
from typing import Any

from rankdebug import ranks as rankspec
from rankdebug.debugplan.options import STOP_MODES
from rankdebug.supervise.together.state import STEPS, CommandError, Flight, Layer, label


class GroupCommands:
    """The group commands of one job's ``Together`` (on its loop thread)."""

    def __init__(self, together: Layer) -> None:
        self.t = together

    def command(self, cmd: dict[str, Any]) -> list[int]:
        """Carry out one group command; the ranks it acted on. Raises CommandError."""
        name = cmd.get("command")
        if name == "stop-mode":
            mode = cmd.get("mode")
            if mode not in STOP_MODES:
                raise CommandError("stop-mode takes mode: together or alone")
            self.t.mode = mode
            return sorted(self.t.gates)
        group = self.select(cmd.get("ranks"))
        if name == "continue":
            # Ranks shown waiting first: a peer continued before could end their collective,
            # and so land their pending pause, before the gate knows to let them run on.
            waiting = [r for r in group if self.t.rank(r).waiting is not None]
            acted = sorted(r for r in [*waiting, *(r for r in group if r not in waiting)]
                           if self.go_on(r))
        elif name == "pause":
            acted = [r for r in group if self.t.rank(r).stopped or self.t.pause(r)]
        elif name == "step":
            acted = self._step(group, cmd.get("kind", "over"))
        elif name == "run-to":
            acted = self._run_to(group, cmd.get("file"), cmd.get("line"))
        else:
            raise CommandError(f"unknown command {name!r}")
        if not acted:
            raise CommandError(f"{name}: no rank of {label(group)} can do that now "
                               "(a rank needs a debugger client; step needs a paused rank)")
        return acted

    def select(self, raw: object) -> list[int]:
        """The chosen ranks a command's ``ranks`` names (none given: all of them)."""
        try:
            spec = rankspec.normalise(raw, default="all")
            rankspec.items(spec)
        except rankspec.RanksError as exc:
            raise CommandError(str(exc)) from None
        group = [r for r, g in sorted(self.t.gates.items())
                 if rankspec.chosen(spec, r, g.local_rank)]
        if not group:
            raise CommandError(f"no chosen rank is in {spec!r} (chosen: "
                               f"{label(sorted(self.t.gates)) or 'none'})")
        return group

    def go_on(self, rank: int) -> bool:
        """Continue one rank (one shown waiting: let its collective run on)."""
        st = self.t.rank(rank)
        gate = self.t.gates[rank]
        if st.waiting is not None:
            done = gate.release_waiting()
            if not done and gate.client():
                # Its real stop came meanwhile (reported, not yet here): continue it then.
                st.resume = done = True
        else:
            done = st.stopped and gate.request("continue", {"threadId": st.thread or 0})
        if done:
            self.t.on_continued(rank)
        return done

    def _step(self, group: list[int], kind: object) -> list[int]:
        command = STEPS.get(str(kind))
        if command is None:
            raise CommandError("step takes kind: over, in or out")
        rank_of = self.t.rank
        for rank in group:
            st = rank_of(rank)
            if st.waiting is not None:  # it cannot step before its collective returns
                self.t.job.emit_job({"event": "blocked", "rank": rank, "in": st.waiting,
                                     **st.numbered})
        acted = [r for r in group if rank_of(r).stopped and rank_of(r).waiting is None
                 and rank_of(r).thread is not None]
        blocked = [r for r in group if rank_of(r).waiting is not None]
        if not acted and blocked:
            # Every rank asked waits in a collective: none steps, and that is the answer
            # (each has said "blocked"); they stop for real when the collective returns.
            self.t.job.emit_job({"event": "arrived", "command": "step", "ranks": []})
            return blocked
        if acted:
            self.t.flights.add(Flight("step", acted, set(acted), set()))
        for rank in acted:
            if self.t.gates[rank].request(command, {"threadId": rank_of(rank).thread}):
                self.t.on_continued(rank)
            else:
                self._arrived(rank)  # its client went: nothing to wait for
        return acted

    def _run_to(self, group: list[int], path: object, line: object) -> list[int]:
        if not isinstance(path, str) or not isinstance(line, int) or line < 1:
            raise CommandError("run-to takes file (a path) and line (a number from 1)")
        path = os.path.realpath(path)
        acted = [r for r in group if self.t.gates[r].client()]
        flight = Flight("run-to", acted, set(acted), set())
        self.t.flights.add(flight)
        for rank in acted:
            st = self.t.rank(rank)
            if st.stopped or self.t.gates[rank].adapter is not None:
                self._go_to(rank, flight, path, line)
            else:
                # Untraced: the debugger comes first (paused), then the line.
                st.then = lambda r=rank: self._go_to(r, flight, path, line)
                if not self.t.pause(rank):
                    st.then = None
                    self._arrived(rank)
        return acted

    def _go_to(self, rank: int, flight: Flight, path: str, line: int) -> None:
        """Add the line to the rank's breakpoints (until the group has arrived); run."""
        gate = self.t.gates[rank]
        mine = gate.breakpoints(path)
        if not any(b.get("line") == line for b in mine["breakpoints"]):
            extra = dict(mine, breakpoints=[*mine["breakpoints"], {"line": line}])
            gate.request("setBreakpoints", extra)

            def undo() -> None:
                gate.request("setBreakpoints", mine)

            flight.undo[rank] = undo
        if self.t.rank(rank).stopped and not self.go_on(rank):
            self._arrived(rank)

    def _arrived(self, rank: int) -> None:
        """A rank the command cannot move (no client): it counts as there."""
        self.t.flights.arrive(rank)
        self.t.flights.shown(rank)

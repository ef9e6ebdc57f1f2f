"""What a client asks of the job: a command on the control socket (answered on it) or a
line of ``--control``'s stdin (whose errors are ``error`` events). Group commands
(continue, pause, step, run-to, stop-mode) go on to ``together``; ``attach`` tells a rank
that runs untraced, or an armed one, to start its debugger; ``stop`` ends the job; ``ping``
is a health check. The commands and their fields are declared in ``protocol.ctl``."""

from __future__ import annotations

import sys
import threading
from typing import Any

from rankdebug.protocol import ctl as ctl_wire
from rankdebug.runtime import wire
from rankdebug.supervise.endpoints import Endpoints
from rankdebug.supervise.hub import Hub
from rankdebug.supervise.rank_conns import RankConns
from rankdebug.supervise.together import GROUP_COMMANDS, CommandError, Together


class Commands:
    def __init__(self, hub: Hub, together: Together, conns: RankConns,
                 endpoints: Endpoints) -> None:
        self.hub = hub
        self.together = together
        self.conns = conns
        self.endpoints = endpoints

    def read_stdin(self) -> None:
        """Read ``--control``'s stdin on a thread of its own, onto the loop's queue."""
        threading.Thread(target=self._read_stdin, name="rankdebug-stdin", daemon=True).start()

    def _read_stdin(self) -> None:
        """``{"command": "attach", "rank": N}``: attach rank N's debugger now (--attach hit);
        ``{"command": "stop"}``: end the job."""
        # A reader of our own: sys.stdin's, held by this daemon thread, would abort the
        # interpreter's shutdown ("could not acquire lock ... at interpreter shutdown").
        stdin = open(sys.stdin.fileno(), "rb", closefd=False)  # noqa: SIM115
        for msg in wire.lines(stdin):
            if isinstance(msg, str):
                self.hub.emit({"event": "error", "command": None, "message": msg})
            else:
                self.hub.events.put(("command", 0, msg))

    def run(self, cmd: dict[str, Any], reply: bool = False) -> dict[str, Any]:
        """One command from --control's stdin or a client of ctl.sock; what to answer the
        latter (stdin's errors are ``error`` events)."""
        name = cmd.get("command")
        if name in GROUP_COMMANDS:
            try:
                acted = self.together.command(cmd)
            except CommandError as exc:
                if not reply:
                    self.hub.emit({"event": "error", "command": name, "message": str(exc)})
                return ctl_wire.error(str(exc))
            return {"ok": True, "ranks": acted}
        if name == "stop":
            self.hub.stop_reason = "asked to stop"
        elif name == "attach":
            return self._attach(cmd.get("rank"), reply)
        elif name != "ping":
            message = f"unknown command {name!r}"
            if not reply:
                self.hub.emit({"event": "error", "command": name, "message": message})
            return ctl_wire.error(message)
        return {"ok": True}

    def _attach(self, rank: object, reply: bool) -> dict[str, Any]:
        conn = next((c for c in self.conns.by_cid.values() if c.rank == rank), None)
        if conn is not None and conn.pid is not None and conn.attach_signal is not None:
            self.endpoints.signal_attach(conn)
        elif conn is not None and conn.socket is not None:
            threading.Thread(target=self._attach_armed, args=(rank, conn.socket),
                             daemon=True).start()
        else:
            message = (f"rank {rank} is not waiting for an attach" if conn is not None
                       else f"the job has no rank {rank} (yet)")
            if not reply:
                self.hub.emit({"event": "error", "command": "attach", "rank": rank,
                               "message": message})
            return ctl_wire.error(message)
        return {"ok": True}

    def _attach_armed(self, rank: object, path: str) -> None:
        """Tell an armed rank to attach; its ``listening`` comes back through the control
        socket like any rank's."""
        try:
            wire.ask(path, {"command": "attach"}, timeout=60.0)
        except wire.WireError as exc:
            self.hub.emit({"event": "error", "command": "attach", "rank": rank,
                           "message": str(exc)})

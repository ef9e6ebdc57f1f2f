"""A chosen rank's debug endpoint: a DAP server in the supervisor in front of debugpy.

The port a ``listening`` event names is a gate, not debugpy's adapter. While the rank runs
without a tracer (``--attach hit``) the gate answers the client itself: ``initialize`` with
debugpy's capabilities, ``attach``, the breakpoints and exception filters (recorded, and
sent to the rank so that it plants hit-hooks for those lines), ``configurationDone``,
``threads``, ``pause``. When the rank needs the debugger (a hook fires, Pause, a breakpoint
on a line without a hook, an uncaught exception) it connects to its adapter; the gate then
connects to that adapter as the client, replays what the client said (``--break`` lines
merged in), and from there relays every message both ways, renumbering ``seq`` so that each
side sees one consistent conversation. A client that connects after that is relayed from
its first message.

One client at a time, as debugpy's adapter itself allows; a connection that closes before
it says anything (a port scan) changes nothing. Only the job's owner gets in: the kernel's
socket table names the user of the connecting socket (``peer``).
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Callable
from typing import Any

from rankdebug.adapter import peer
from rankdebug.runtime.bound_breaks import with_lines
from rankdebug.runtime.port_rule import on_port_or_any
from rankdebug.runtime.serve import Door, Loop, Server
from rankdebug.supervise.gates import dapwire
from rankdebug.supervise.gates import preset as gate_preset
from rankdebug.supervise.gates.client import ClientSession
from rankdebug.supervise.gates.said import Said
from rankdebug.supervise.gates.waiting import WaitFrame

Notify = Callable[[str, "dict[str, Any] | None"], None]
Answer = Callable[[dict[str, Any]], None]


class Gate:
    """The debug endpoint of one chosen rank (see the module's docstring)."""

    def __init__(self, rank: int, host: str, port: int,  # noqa: PLR0913
                 cli_breaks: dict[str, set[int]], notify: Notify,
                 preset: gate_preset.Config | None = None) -> None:
        self.rank = rank
        # The client's breakpoints sent with the launch (gate_preset): the rank goes with
        # them at once, until its client has configured it.
        self.preset = preset
        self.went: dict[str, Any] | None = None  # the plan the rank went with (job._go)
        self.local_rank: int | None = None  # for breakpoints bound to ``localN``
        self.cli_breaks = cli_breaks
        self._notify = notify
        self.held = False  # paused by the job (stop together), not by the client
        self.traced_from_start = False  # --attach start: relays from the first message
        self.lock = threading.RLock()
        self.adapter: tuple[str, int] | None = None  # set once the rank is traced
        self.idle = threading.Event()  # no session talks to the adapter
        self.idle.set()
        self.session: ClientSession | None = None
        self.listener = _listen(host, port)
        self.host, self.port = self.listener.getsockname()[:2]
        # One client at a time, on a thread of its own; another user's connection is told
        # why it is turned away (DAP clients show an ``output`` event).
        self._server = Server(self.listener, self._client,
                              Loop(name=f"rankdebug-gate-{rank}",
                                   threads=f"rankdebug-gate-{rank}-client"),
                              Door(admit=peer.allowed,
                                   refused=_why("this rank belongs to another user")))

    def notify(self, what: str, info: dict[str, Any] | None = None) -> None:
        self._notify(what, info)

    def start(self) -> None:
        self._server.start()

    def close(self) -> None:
        self._server.stop()
        session = self.session
        if session is not None:
            session.end()

    # --- what the rank is told ------------------------------------------------------

    def plan(self) -> dict[str, Any]:
        """The breakpoints and modes the rank runs with until it is traced."""
        with self.lock:
            said = self._said()
            breaks = {p: set(lines) for p, lines in self.cli_breaks.items()}
            for path, lines in said.breaks().items():
                breaks.setdefault(path, set()).update(lines)
            return {
                "breaks": sorted([p, n] for p, lines in breaks.items() for n in lines),
                "trace": said.needs_tracer(),
                "uncaught": said.uncaught(),
                "pause": said.pause or self.held or self._asked_pause(),
                "configured": said.configured,
            }

    def _said(self) -> Said:
        """What the rank runs with: its client's word once configured, else the preset."""
        session = self.session
        if session is not None and (session.said.configured or self.preset is None):
            return session.said
        if self.preset is None:
            return Said()
        return Said(config=gate_preset.for_rank(self.preset, self.rank, self.local_rank),
                    configured=True)

    def _asked_pause(self) -> bool:
        return self.session is not None and self.session.said.pause

    def go_live(self, host: str, port: int) -> None:
        """The rank is connecting to its adapter at ``host:port``: relay from now on."""
        with self.lock:
            self.adapter = (host, port)
            session = self.session
        if session is not None:
            session.go_live(host, port)

    def client(self) -> bool:
        """A client has configured this rank (someone can be shown it paused)."""
        with self.lock:
            return self.session is not None and not self.session.ended and \
                self.session.said.configured

    def request(self, command: str, args: dict[str, Any], answer: Answer | None = None
                ) -> bool:
        """Send the adapter a request of the job's own (the client sees its events); False
        when the rank is untraced or has no client."""
        with self.lock:
            session = self.session
        return session is not None and session.request(command, args, answer)

    def show_waiting(self, what: str, frames: list[WaitFrame]) -> bool:
        """Show the client this rank paused while it waits in native code (gate_waiting)."""
        with self.lock:
            session = self.session
        return session is not None and session.show_waiting(what, frames)

    def release_waiting(self) -> bool:
        with self.lock:
            session = self.session
        return session is not None and session.release_waiting()

    def breakpoints(self, path: str) -> dict[str, Any]:
        """``setBreakpoints`` arguments for ``path`` as this rank has them now (the client's
        list as bound to this rank, with the ``--break`` lines)."""
        with self.lock:
            said = self.session.said if self.session is not None else Said()
            args: dict[str, Any] = {"source": {"path": path}, "breakpoints": []}
            for key, req in said.config.items():
                if key.startswith("setBreakpoints:") and os.path.realpath(key[15:]) == path:
                    args = dict(req.get("arguments") or args)
            bps = [b for b in args.get("breakpoints") or [] if isinstance(b, dict)]
            return dict(args, breakpoints=with_lines(bps, self.cli_breaks.get(path, ())))

    # --- clients --------------------------------------------------------------------

    def _client(self, conn: socket.socket, _n: int) -> None:
        """One connection: its session, unless a client that has spoken holds the rank (a
        connection that said nothing yet, a port scan, gives way)."""
        with self.lock:
            old = self.session
            busy = old is not None and not old.ended and old.spoke
            if old is not None and not busy:
                old.end()
            if not busy:
                self.session = ClientSession(self, conn)
                session = self.session
        if busy:
            _refuse(conn, "this rank already has a debugger client")
            return
        session.run()


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return on_port_or_any(port, lambda p: socket.create_server((host, p), family=family))


def _why(text: str) -> bytes:
    """Why a client is turned away, as a DAP ``output`` event its editor shows."""
    return dapwire.encode(dapwire.event("output", {
        "category": "important", "output": f"rankdebug: {text}\n"}))


def _refuse(conn: socket.socket, text: str) -> None:
    """Tell a client why it is turned away, then close."""
    with contextlib.suppress(OSError):
        conn.sendall(_why(text))
    with contextlib.suppress(OSError):
        conn.close()

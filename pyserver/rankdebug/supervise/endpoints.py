"""Each rank's debug endpoints, the supervisor's side of them: the rank's gate (the port a
client connects to, ``gate.py``) and the debugpy adapter started here behind it
(``adapters.py``), what a gate reports (a client configured the rank, changed its
breakpoints, paused or terminated it), and the ``go`` that tells a waiting untraced rank its
client's breakpoints. Runs on the loop thread; adapters start on threads of their own and
their result comes back through the loop's queue as an ``adapter`` item, a gate's news as a
``gate`` item."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from typing import Any

from rankdebug.runtime.port_rule import on_port_or_any
from rankdebug.supervise.adapters import Adapter, start_adapter
from rankdebug.supervise.gates.gate import Gate
from rankdebug.supervise.hub import Hub, chosen
from rankdebug.supervise.nodes.watch import Nodes
from rankdebug.supervise.rank_conns import RankConn, RankConns
from rankdebug.supervise.together import Together


class Endpoints:
    def __init__(self, hub: Hub, gates: dict[int, Gate], together: Together,
                 conns: RankConns, nodes: Nodes) -> None:
        self.hub = hub
        self.gates = gates  # --attach hit: each chosen rank's endpoint (shared with together)
        self.together = together
        self.conns = conns
        self.nodes = nodes
        # --attach hit: adapters started here (rank -> Adapter, or the error text).
        self._adapters: dict[int, Adapter | str] = {}
        self._asking: dict[int, int] = {}  # rank -> connection waiting for its adapter
        self._spawned: set[int] = set()  # ranks whose adapter was started

    # --- adapters ---------------------------------------------------------------------

    def spawn_adapter(self, rank: int) -> None:
        """Start rank's adapter in the background, once."""
        if rank in self._adapters or rank in self._spawned:
            return
        self._spawned.add(rank)
        threading.Thread(target=self._start_adapter, args=(rank,), daemon=True).start()

    def _start_adapter(self, rank: int) -> None:
        plan = self.hub.plan
        # Tagged for the final sweep; it ends by itself if this process is killed outright.
        env = dict(os.environ, RANKDEBUG_JOB=self.hub.job,
                   RANKDEBUG_SUPERVISOR_PID=str(os.getpid()))
        # Behind a gate (every chosen rank) the adapter is the gate's alone: any free
        # loopback port.
        gated = rank in self.gates or chosen(plan, rank)
        port = 0 if gated else plan.ports.get(rank, 0)
        host = "127.0.0.1" if gated else plan.host
        try:
            adapter: Adapter | str = on_port_or_any(port, lambda p: start_adapter(host, p, env))
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            adapter = f"cannot start the debug adapter: {exc}"
        self.hub.events.put(("adapter", rank, {"adapter": adapter}))

    def asked(self, rank: int, cid: int) -> None:
        """A rank on this node asks for its adapter (connection ``cid`` waits)."""
        found = self._adapters.get(rank)
        if found is None:
            self.spawn_adapter(rank)  # an armed rank told to attach: started now
            self._asking[rank] = cid
        else:
            self._give_adapter(rank, cid, found)

    def on_adapter(self, rank: int, adapter: Adapter | str) -> None:
        """The rank's adapter has started (or could not)."""
        self._adapters[rank] = adapter
        asking = self._asking.pop(rank, None)
        if not isinstance(adapter, Adapter):
            self.hub.say(f"rank {rank}: {adapter}")
            if asking is not None:
                self.hub.ctl.reply(asking, {"error": adapter})
            return
        if asking is not None:
            self._give_adapter(rank, asking, adapter)
        if rank in self.gates:
            return  # the gate's port is the one reported
        pid = self.conns.pid_of(rank)
        if chosen(self.hub.plan, rank):
            # --attach start: a gate in front all the same (ranks together), relaying from
            # its client's first message.
            gate = self.open_gate(rank, pid)
            if gate is not None:
                conn = self.conns.conn(rank)
                gate.local_rank = conn.local_rank if conn is not None else None
                gate.traced_from_start = True
                gate.go_live(adapter.client_host, adapter.client_port)
                return
        self.hub.record(rank, {"state": "listening", "host": adapter.client_host,
                               "port": adapter.client_port, "pid": pid})
        self.hub.emit({"event": "listening", "rank": rank, "host": adapter.client_host,
                       "port": adapter.client_port, "pid": pid, "job": self.hub.job})

    def _give_adapter(self, rank: int, cid: int, adapter: Adapter | str) -> None:
        """Answer a rank that connects to its adapter; its gate relays from now on."""
        if not isinstance(adapter, Adapter):
            self.hub.ctl.reply(cid, {"error": adapter})
            return
        reply = adapter.for_rank()
        gate = self.gates.get(rank)
        if gate is not None:
            reply["pause"] = gate.plan()["pause"]
            threading.Thread(target=gate.go_live,
                             args=(adapter.client_host, adapter.client_port),
                             daemon=True).start()
        self.hub.ctl.reply(cid, reply)

    # --- gates ------------------------------------------------------------------------

    def open_gate(self, rank: int, pid: int | None, node: str | None = None) -> Gate | None:
        """The rank's debug endpoint, opened (and reported ``listening``) once."""
        gate = self.gates.get(rank)
        if gate is not None:
            return gate
        plan = self.hub.plan
        breaks: dict[str, set[int]] = {}
        for path, line in plan.breaks:
            breaks.setdefault(path, set()).add(line)
        try:
            gate = Gate(rank, plan.host, plan.ports.get(rank, 0), breaks,
                        lambda what, info: self.hub.events.put(
                            ("gate", rank, {"what": what, "info": info or {}})),
                        preset=self.hub.preset)
        except OSError as exc:
            self.hub.say(f"rank {rank}: cannot listen for a debugger: {exc}")
            return None
        self.gates[rank] = gate
        gate.start()
        self.hub.record(rank, {"state": "listening", "host": gate.host, "port": gate.port,
                               "pid": pid, "node": node})
        event: dict[str, Any] = {"event": "listening", "rank": rank, "host": gate.host,
                                 "port": gate.port, "pid": pid, "job": self.hub.job}
        if node is not None:
            event["node"] = node
        self.hub.emit(event)
        return gate

    def go(self, rank: int) -> None:
        """Tell a waiting rank its client's breakpoints: it runs on untraced."""
        found = self.conns.of(rank)
        gate = self.gates.get(rank)
        if found is None or gate is None or not found[1].waiting:
            return
        cid, conn = found
        conn.waiting = False
        gate.went = gate.plan()
        self.hub.ctl.reply(cid, dict(gate.went, event="go"))

    def on_gate(self, rank: int, what: str, info: dict[str, Any]) -> None:
        """What the rank's gate reports of its client."""
        conn = self.conns.conn(rank)
        if what in ("stopped", "continued", "resumed", "disconnected"):
            self.together.on_gate(rank, what, info)
            gate = self.gates.get(rank)
            if what == "disconnected" and gate is not None:
                # The rank runs on behind its gate, open to the next client: listening again.
                self.hub.record(rank, {"state": "listening", "host": gate.host,
                                       "port": gate.port})
        elif what == "configured":
            self.conns.attached.add(rank)
            pid = conn.pid if conn is not None else None
            self.hub.record(rank, {"state": "attached", "pid": pid})
            self.hub.emit({"event": "attached", "rank": rank, "pid": pid, "job": self.hub.job})
            if conn is not None and not conn.waiting and self._unserved(rank):
                self.signal_attach(conn)  # --no-wait: the rank runs with --break lines only
            self.go(rank)
        elif what in ("changed", "pause"):
            if conn is not None and conn.waiting:
                if what == "pause":
                    self.go(rank)
                return
            # New lines may have no hit-hook: the rank attaches now, where it is.
            if conn is not None:
                self.signal_attach(conn)
        elif what == "terminate" and conn is not None and conn.pid is not None:
            self.nodes.kill(conn, signal.SIGTERM)

    def _unserved(self, rank: int) -> bool:
        """The client wants what the rank's hit-hooks (its --break lines) cannot give."""
        gate = self.gates.get(rank)
        if gate is None or gate.adapter is not None:
            return False
        plan = gate.plan()
        went = gate.went  # the preset it went with (gate_preset), else its --break lines
        planted = ({(str(p), int(n)) for p, n in went["breaks"]} if went is not None else
                   {(p, n) for p, lines in gate.cli_breaks.items() for n in lines})
        wanted = {(str(p), int(n)) for p, n in plan["breaks"]}
        catches = went is not None and went["uncaught"]
        return bool(plan["trace"] or (plan["uncaught"] and not catches)
                    or not wanted <= planted)

    def pause_untraced(self, rank: int) -> bool:
        """Stop together, for a rank that runs untraced: it attaches, paused."""
        conn = self.conns.conn(rank)
        gate = self.gates.get(rank)
        if conn is None or gate is None or conn.attach_signal is None:
            return False
        gate.held = True
        if conn.waiting:
            self.go(rank)
        else:
            self.signal_attach(conn)
        return True

    def signal_attach(self, conn: RankConn) -> None:
        """Tell a rank that runs untraced to start its debugger, where it is."""
        if conn.pid is not None and conn.attach_signal is not None:
            self.nodes.kill(conn, conn.attach_signal)

    def close(self) -> None:
        for gate in self.gates.values():
            gate.close()

"""What ranks report to the job's control socket, each report handled by the method named
after it: ``on_started``, ``on_listening``, ``on_attached``, ``on_exit``, ``on_armed``,
``on_handler``, ``on_adapter``, ``on_raised``. The reports and their fields are declared
once, in ``protocol.ctl.EVENTS``; a report reaches ``report`` only once it passed that
check, and ``RankReports`` will not even be built while a declared report has no handler.
Every report first says who the connection is (its rank, node, role: ``rank_conns``); the
handler then records the rank's registry fields and says the ``--json`` events they
mean. Runs on the loop thread."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rankdebug.protocol import ctl as ctl_wire
from rankdebug.supervise.endpoints import Endpoints
from rankdebug.supervise.hub import Hub
from rankdebug.supervise.nodes.watch import Nodes
from rankdebug.supervise.rank_conns import RankConn, RankConns

Handler = Callable[[int, int, RankConn, dict[str, Any]], None]


class RankReports:
    def __init__(self, hub: Hub, conns: RankConns, endpoints: Endpoints,
                 nodes: Nodes) -> None:
        self.hub = hub
        self.conns = conns
        self.endpoints = endpoints
        self.nodes = nodes
        # Every declared report, to its handler (an AttributeError here: one is missing).
        self.handlers: dict[str, Handler] = {name: getattr(self, f"on_{name}")
                                             for name in ctl_wire.EVENTS}

    def report(self, cid: int, msg: dict[str, Any]) -> None:
        """A report (checked: ``ctl_wire.check``) on connection ``cid``."""
        rank = msg.get("rank")
        if not isinstance(rank, int):
            return
        conn = self.conns.by_cid.setdefault(cid, RankConn())
        conn.rank = rank
        node = msg.get("node")
        if isinstance(node, str) and self.nodes.named(node) is not None:
            conn.node = node
        role = msg.get("role")  # a Ray actor's (debug.role): said once, for the rank's label
        if isinstance(role, str) and role and role[:40] != conn.role:
            conn.role = role[:40]
            self.hub.record(rank, {"role": conn.role})
            self.hub.emit({"event": "role", "rank": rank, "role": conn.role,
                           "job": self.hub.job})
        self.handlers[msg["event"]](rank, cid, conn, msg)

    def on_started(self, rank: int, _cid: int, conn: RankConn, msg: dict[str, Any]) -> None:
        """The rank's process runs (chosen: debugged from the start; else armed)."""
        conn.chosen = msg.get("chosen") is not False
        conn.pid = msg.get("pid")
        local = msg.get("local_rank")
        conn.local_rank = local if isinstance(local, int) else None
        self.hub.record(rank, {"pid": msg.get("pid"), "state": "running",
                               "local_rank": msg.get("local_rank"),
                               "world_size": msg.get("world_size")})

    def on_listening(self, rank: int, _cid: int, conn: RankConn,
                     msg: dict[str, Any]) -> None:
        """The rank's debugpy accepts connections (--attach start)."""
        if conn.node is not None:
            self._remote_listening(rank, conn, msg)
            return
        self.hub.emit({"event": "listening", "rank": rank, "host": msg.get("host"),
                       "port": msg.get("port"), "pid": msg.get("pid"), "job": self.hub.job})
        self.hub.record(rank, {"pid": msg.get("pid"), "state": "listening",
                               "host": msg.get("host"), "port": msg.get("port")})

    def _remote_listening(self, rank: int, conn: RankConn, msg: dict[str, Any]) -> None:
        """A rank on another node listens on that node's loopback: its gate (here, opened
        now for --attach start) relays to it through the node's SSH connection."""
        node = self.nodes.named(conn.node)
        port = msg.get("port")
        if node is None or not isinstance(port, int):
            return
        started = rank not in self.endpoints.gates
        gate = self.endpoints.open_gate(rank, conn.pid, conn.node)
        if gate is None:
            return
        gate.local_rank = conn.local_rank
        if started:
            gate.traced_from_start = True
        self.nodes.relay(rank, node, port, gate)

    def on_attached(self, rank: int, _cid: int, _conn: RankConn,
                    msg: dict[str, Any]) -> None:
        """A client attached to the rank's debugpy."""
        self.conns.attached.add(rank)
        gate = self.endpoints.gates.get(rank)
        if gate is None or gate.traced_from_start:  # else the gate reports it itself
            self.hub.emit({"event": "attached", "rank": rank, "pid": msg.get("pid"),
                           "job": self.hub.job})
        self.hub.record(rank, {"pid": msg.get("pid"), "state": "attached"})

    def on_exit(self, rank: int, _cid: int, conn: RankConn, msg: dict[str, Any]) -> None:
        """The rank's script finished (its atexit ran): its end is no crash."""
        conn.finished = True
        self.hub.record(rank, {"pid": msg.get("pid"), "state": "exited"})

    def on_handler(self, rank: int, _cid: int, conn: RankConn, msg: dict[str, Any]) -> None:
        """The rank serves its handler (eval, stacks; an armed rank's attach) on a socket."""
        if conn.node is not None:
            self.nodes.on_handler(rank, conn, msg)
            return
        path = msg.get("socket")
        conn.socket = path if isinstance(path, str) else None
        # A chosen rank's socket serves eval and stacks; it is not how it is debugged.
        self.hub.record(rank, {"pid": msg.get("pid"), "socket": conn.socket,
                               "armed": conn.socket is not None
                               and msg.get("armed") is not False})

    def on_armed(self, rank: int, _cid: int, conn: RankConn, msg: dict[str, Any]) -> None:
        """A chosen rank runs untraced: open its gate, start its adapter; it may wait for
        its client's breakpoints."""
        conn.pid = msg.get("pid")
        sig = msg.get("signal")
        conn.attach_signal = sig if isinstance(sig, int) else None
        conn.waiting = msg.get("wait") is True
        gate = self.endpoints.open_gate(rank, conn.pid, conn.node)
        if gate is not None:
            gate.local_rank = conn.local_rank
        if conn.node is None:
            self.endpoints.spawn_adapter(rank)
        if gate is not None and conn.waiting and gate.plan()["configured"]:
            self.endpoints.go(rank)

    def on_adapter(self, rank: int, cid: int, conn: RankConn, _msg: dict[str, Any]) -> None:
        """The rank asks for its debug adapter (answered once it runs)."""
        if conn.node is not None:  # debugpy listens there, on the node's loopback
            self.hub.ctl.reply(cid, {"error": "on another node: listen there"})
            return
        self.endpoints.asked(rank, cid)

    def on_raised(self, rank: int, _cid: int, conn: RankConn, msg: dict[str, Any]) -> None:
        """Held for inspection (runtime/hold.py): alive, its registry entry written by the
        rank itself (after this supervisor's earlier updates); a rank on another node cannot
        reach this registry, so it is recorded here."""
        said = {k: msg.get(k) for k in ("exception", "message", "file", "line", "function")}
        self.conns.held_raised.add(rank)
        if conn.node is not None:
            self.hub.record(rank, {"pid": msg.get("pid", conn.pid), "state": "raised",
                                   "raised": said})
        if self.hub.json_mode:  # for a person, the rank says it itself on the same stderr
            self.hub.emit({"event": "raised", "rank": rank, "pid": msg.get("pid", conn.pid),
                           **said, "job": self.hub.job})

    def on_eof(self, cid: int) -> RankConn | None:
        """Connection ``cid`` closed: the rank it was, if it said (its process has ended,
        or is about to)."""
        conn = self.conns.by_cid.pop(cid, None)
        if conn is not None and conn.rank is not None:
            self.conns.held_raised.discard(conn.rank)
        return conn

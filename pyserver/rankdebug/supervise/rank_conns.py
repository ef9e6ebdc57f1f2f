"""The ranks connected to the job's control socket, one ``RankConn`` per connection: what
each rank has said of itself (pid, local rank, node, role, its handler's socket, whether it
waits for its client's breakpoints), and two sets the hang watch reads: ranks held at an
uncaught exception and chosen ranks whose client has configured them. Written on the loop
thread only; the hang watch's thread reads it and asks again when it changed meanwhile."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class RankConn:
    rank: int | None = None
    pid: int | None = None
    attach_signal: int | None = None
    finished: bool = False  # the rank's script ended (its atexit ran)
    chosen: bool = True  # debugged from the start; an armed rank's end is the launcher's affair
    socket: str | None = None  # an armed rank's control socket
    waiting: bool = False  # an untraced rank waits for its client's breakpoints
    local_rank: int | None = None
    node: str | None = None  # "nodeN": a rank on another node (``--hosts``)
    role: str | None = None  # a Ray actor's role (``actor/rollout/ref``, ``critic``)


class RankConns:
    def __init__(self) -> None:
        self.by_cid: dict[int, RankConn] = {}  # connection id (ctl_server) -> its rank
        self.held_raised: set[int] = set()  # ranks held at an uncaught exception
        self.attached: set[int] = set()  # chosen ranks whose client has configured them

    def of(self, rank: int) -> tuple[int, RankConn] | None:
        """The rank's connection and its id (the first, should a rank have two)."""
        return next(((cid, c) for cid, c in self.by_cid.items() if c.rank == rank), None)

    def conn(self, rank: int) -> RankConn | None:
        found = self.of(rank)
        return found[1] if found is not None else None

    def pid_of(self, rank: int) -> int | None:
        conn = self.conn(rank)
        return conn.pid if conn is not None else None

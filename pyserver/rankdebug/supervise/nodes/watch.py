"""The job's other nodes (``--hosts``) as the supervisor sees them: their watchers started
before or after the launcher (``spread``: the launcher starts the ranks there), a node's
part that ended badly, the wait for every part at the end, a signal to a rank there, and
what a rank there serves (its debugpy port, its handler socket) forwarded over the node's
SSH connection to this one. ``remote.RemoteNode`` is one node's connection."""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from rankdebug.supervise.gates.gate import Gate
from rankdebug.supervise.hub import Hub
from rankdebug.supervise.nodes.remote import RemoteError, RemoteNode, node_argv, node_env
from rankdebug.supervise.rank_conns import RankConn

# Another node's job ended before this one's: how long the rest may take to end too.
REMOTE_END_WAIT_S = 60.0


class Nodes:
    def __init__(self, hub: Hub, remotes: list[RemoteNode], spread: bool) -> None:
        self.hub = hub
        self.remotes = remotes
        self.spread = spread  # the launcher here starts the other nodes' ranks (srun, mpirun)

    def named(self, name: str | None) -> RemoteNode | None:
        return next((n for n in self.remotes if n.name == name), None) if name else None

    def start_before(self, stdout: int | None) -> None:
        """Spread jobs: the nodes' watchers, and the control socket there, come first."""
        if not self.spread:
            return
        for node in self.remotes:
            node.start(None, {"RANKDEBUG_JOB": self.hub.job}, self.hub.plan.cwd,
                       self.hub.ctl.path, stdout)
        with ThreadPoolExecutor(max_workers=min(16, len(self.remotes) or 1)) as pool:
            list(pool.map(lambda node: node.wait_socket(f"{node.dir}/ctl.sock"),
                          self.remotes))

    def start_after(self, stdout: int | None) -> None:
        """Not spread: each node runs the command's own part there."""
        if self.spread:
            return
        plan = self.hub.plan
        for node in self.remotes:
            node.start(node_argv(plan.argv, node.index),
                       node_env(plan.env, dict(os.environ), self.hub.job_dir, node.dir,
                                node.name),
                       plan.cwd, self.hub.ctl.path, stdout)

    def failed(self) -> str | None:
        """Why the job ends when another node's part ended badly (or its SSH connection was
        lost), naming the node; None while none did."""
        for node in self.remotes:
            code = node.runner.poll() if node.runner is not None else None
            if code is None or code == 0:
                continue
            what = (f"the SSH connection to {node.host} was lost" if code == 255
                    else f"the job there ended with status {code}")
            return f"{node.name} ({node.host}): {what}"
        return None

    def end(self, code: int) -> int:
        """This node's launcher ended with ``code``: the other nodes' parts end too (they
        are given a while when it ended well); the job's status is the first failure."""
        if not self.remotes:
            return code
        # Spread by the launcher: its ranks there have ended with it; the watchers end now.
        wait = REMOTE_END_WAIT_S if code == 0 and not self.spread else 0.0
        deadline = time.monotonic() + wait
        codes = []
        for node in self.remotes:
            got = node.wait(max(0.0, deadline - time.monotonic()))
            if got is None:
                node.stop()
                got = node.wait(5.0)
            codes.append(got if got is not None else 1)
        return code if code != 0 else next((c for c in codes if c != 0), 0)

    def stop(self) -> None:
        for node in self.remotes:  # their runners end the job there as this one ends here
            node.stop()

    def close(self) -> None:
        for node in self.remotes:
            node.close()

    def kill(self, conn: RankConn, sig: int) -> None:
        """Signal a rank's process, here or on its node (over its SSH connection)."""
        if conn.pid is None:
            return
        node = self.named(conn.node)
        if node is not None:
            pid = conn.pid
            threading.Thread(target=node.kill, args=(pid, sig), daemon=True).start()
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(conn.pid, sig)

    def relay(self, rank: int, node: RemoteNode, port: int, gate: Gate) -> None:
        """A rank there listens on that node's loopback: its gate here relays to it."""
        self._forwarded(f"rankdebug-forward-{rank}", lambda: node.forward(port),
                        lambda path: gate.go_live(path, 0), f"rank {rank}: ")

    def on_handler(self, rank: int, conn: RankConn, msg: dict[str, Any]) -> None:
        """A rank there serves its handler on a socket there: forwarded to one in the
        job's folder here, recorded as the rank's, so eval, compare, stacks and attach
        reach it as a local rank's."""
        node = self.named(conn.node)
        path = msg.get("socket")
        if node is None or not isinstance(path, str):
            return
        armed = msg.get("armed") is not False
        pid = msg.get("pid")

        def done(here: str) -> None:
            if conn.finished:  # the rank ended meanwhile
                return
            conn.socket = here
            self.hub.record(rank, {"pid": pid, "socket": here, "armed": armed})

        self._forwarded(f"rankdebug-handler-{rank}", lambda: node.forward_socket(path),
                        lambda here: self.hub.post(lambda: done(here)),
                        f"rank {rank}: its handler on {node.host} cannot be reached: ")

    def _forwarded(self, name: str, forward: Callable[[], str], then: Callable[[str], None],
                   failed: str) -> None:
        """``forward()`` (an SSH round trip) on a thread of its own, then ``then`` with the
        socket it made here; a failure is said, prefixed with ``failed``."""
        def run() -> None:
            try:
                path = forward()
            except (OSError, RemoteError, subprocess.SubprocessError) as exc:
                said = f"{failed}{exc}"
                self.hub.post(lambda: self.hub.say(said))
                return
            then(path)

        threading.Thread(target=run, name=name, daemon=True).start()

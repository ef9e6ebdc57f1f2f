"""The supervisor: starts the job, relays what ranks report, and ends every process it started.

One job, one supervisor process (the ``rankdebug launch`` process itself):

1. it listens on a control socket in the job's registry folder; chosen ranks connect to it
   and report ``started``, ``listening`` (the port accepts connections), ``attached`` and
   ``exit`` as JSON lines;
2. it starts the command in a session of its own, as a child subreaper, so that debugpy's
   daemonized adapters and the ranks of a dead launcher re-parent to it;
3. it ends the job (SIGTERM to every descendant, SIGKILL after a grace period) on SIGINT,
   SIGTERM or SIGHUP, when a chosen rank ends without finishing its script (a crash, or a
   debugger's ``terminate``), and when the launcher exits; then it removes the registry
   entries and prints ``{"event": "exited", "code": N}``.

``Supervisor`` is the coordinator: its loop (one thread: whatever other threads learn is
put on its queue), the output and the registry, and the end of the job. Each peer has a
class of its own, handed the supervisor as a ``hub.Hub``: the ranks' reports
(``rank_reports``, over ``rank_conns``), their debug endpoints (``endpoints``: gates and
adapters), clients' commands (``commands``), the other nodes (``nodes``), the job's
processes (``job_procs``) and the group layer (``together``).
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from rankdebug.debugplan.job_env import JobRun
from rankdebug.protocol import ctl as ctl_wire
from rankdebug.runtime import registry
from rankdebug.supervise import event_text, procs
from rankdebug.supervise.commands import Commands
from rankdebug.supervise.ctl_server import CtlServer, Events
from rankdebug.supervise.endpoints import Endpoints
from rankdebug.supervise.gates.gate import Gate
from rankdebug.supervise.hang_watch import HangWatch
from rankdebug.supervise.hub import chosen
from rankdebug.supervise.job_procs import JobProcesses
from rankdebug.supervise.json_out import JsonOut
from rankdebug.supervise.nodes.remote import RemoteError, RemoteNode
from rankdebug.supervise.nodes.watch import Nodes
from rankdebug.supervise.rank_conns import RankConns
from rankdebug.supervise.rank_ends import RankEnds
from rankdebug.supervise.rank_reports import RankReports
from rankdebug.supervise.together import Together


@dataclass
class Supervisor:
    plan: JobRun
    job: str
    job_dir: str
    json_mode: bool
    control: bool = False  # read JSON commands from stdin (the job gets /dev/null)
    out: TextIO = field(default_factory=lambda: sys.stdout)
    err: TextIO = field(default_factory=lambda: sys.stderr)
    remotes: list[RemoteNode] = field(default_factory=list)  # the job's other nodes
    spread: bool = False  # the launcher here starts the other nodes' ranks (srun, mpirun)
    hang_seconds: float = 0.0  # say when no rank progressed for this long (0: off)
    # The client's breakpoints sent with the launch (gate_preset): chosen ranks go at once.
    preset: dict[str, dict[str, Any]] | None = None

    def __post_init__(self) -> None:
        self.events: Events = queue.Queue()
        self.ctl_path = os.path.join(self.job_dir, "ctl.sock")
        self.ctl = CtlServer(self.ctl_path, self.events)
        self.stop_reason: str | None = None
        self.stop_signal: int | None = None
        self._emit_lock = threading.Lock()
        self._out = JsonOut(self.out) if self.json_mode else None
        gates: dict[int, Gate] = {}  # each chosen rank's endpoint: the group layer's too
        self.together = Together(gates, self, self.plan.stop)
        self.conns = RankConns()
        self.nodes = Nodes(self, self.remotes, self.spread)
        self.endpoints = Endpoints(self, gates, self.together, self.conns, self.nodes)
        self.reports = RankReports(self, self.conns, self.endpoints, self.nodes)
        self.commands = Commands(self, self.together, self.conns, self.endpoints)
        self.processes = JobProcesses(self, self.nodes, self.control)
        self.ends = RankEnds(self.plan, self.conns, self.say)
        self.hang_watch = HangWatch(self.hang_seconds, self.job, self.job_dir,
                                    self._user_holds,
                                    lambda event: self.post(lambda: self._on_hang(event)))

    @property
    def proc(self) -> subprocess.Popen[bytes] | None:
        """The launcher's process, once started."""
        return self.processes.proc

    # --- output ---------------------------------------------------------------------

    def emit(self, event: dict[str, Any]) -> None:
        with self._emit_lock:
            if self._out is not None:
                self._out.write(event)
            else:
                self.say(event_text.human(event))

    def reader_gone(self) -> bool:
        """Whether the program reading ``--json`` (an editor, a script) has gone (json_out)."""
        return self._out is not None and self._out.reader_gone()

    # --- what the peers (hub.Hub) and the group layer (together.JobSide) ask of the job ---

    def emit_job(self, event: dict[str, Any]) -> None:
        self.emit(dict(event, job=self.job))

    def post(self, fn: Callable[[], None]) -> None:
        self.events.put(("call", 0, {"fn": fn}))

    def record(self, rank: int, fields: dict[str, Any]) -> None:
        conn = self.conns.conn(rank)
        node = self.nodes.named(conn.node) if conn is not None else None
        if node is not None:  # its pid is that node's: Training Jobs must not look here
            fields = dict(fields, node=node.name, machine=node.host)
        with contextlib.suppress(OSError, registry.RegistryError):
            registry.update_rank(self.job, rank, **fields)

    def say(self, text: str) -> None:
        self.err.write(f"rankdebug: {text}\n")
        self.err.flush()

    def pause_untraced(self, rank: int) -> bool:
        """Stop together, for a rank that runs untraced: it attaches, paused."""
        return self.endpoints.pause_untraced(rank)

    def pid_of(self, rank: int) -> int | None:
        return self.conns.pid_of(rank)

    # --- the job ----------------------------------------------------------------------

    def start(self) -> None:
        self.processes.start()
        if self.control:
            self.commands.read_stdin()

    def _on_signal(self, signum: int, _frame: object) -> None:
        self.events.put(("signal", signum, None))

    def run(self) -> int:
        """Start the job, supervise it to its end; returns the exit status."""
        old = {
            s: signal.signal(s, self._on_signal)
            for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
        }
        try:
            try:
                self.ctl.open()
            except OSError as exc:  # the job folder's socket: nothing has started yet
                self.say(f"cannot open the job's control socket {self.ctl_path}: "
                         f"{exc.strerror or exc}")
                code = 1
            else:
                code = self._run_started()
        finally:
            for s, h in old.items():
                signal.signal(s, h)
            self._cleanup()
        self.emit({"event": "exited", "code": code})
        return code

    def _run_started(self) -> int:
        """Start the job and supervise it; its exit status."""
        try:
            self.start()
            self.ctl.serve()
            self.hang_watch.start()
        except OSError as exc:
            self.say(f"cannot start {self.plan.argv[0]!r}: {exc.strerror or exc}")
            return 127 if isinstance(exc, FileNotFoundError) else 126
        except RemoteError as exc:  # a node's watcher (spread jobs) did not come up
            self.say(str(exc))
            return 1
        return self._loop()

    def _loop(self) -> int:
        assert self.proc is not None
        while True:
            try:
                kind, ident, msg = self.events.get(timeout=0.1)
            except queue.Empty:
                kind, ident, msg = "tick", 0, None
            self._dispatch(kind, ident, msg)
            self.together.tick()
            self.ends.tick(stopping=self.stop_reason is not None)
            if self.stop_reason is None and self.ends.abnormal():
                self.stop_reason = "a rank ended before its script finished"
            if self.stop_reason is None:
                self.stop_reason = self.nodes.failed()
            if self.stop_reason is None and self.reader_gone():
                self.stop_reason = ("the program reading its --json output has gone (as when "
                                    "an editor closes)")
            code = self.proc.poll()
            if code is not None:
                code = self.nodes.end(code)
                if code != 0 and self.stop_signal is None:
                    self.ends.say_first_ended()
                if code < 0 and self.stop_signal is None:  # not our doing: say who and how
                    self.say(f"the launcher ({os.path.basename(self.plan.argv[0])}, pid "
                             f"{self.proc.pid}) was killed by {_signal_name(-code)}; ending "
                             "what is left of the job")
                return self._status(code)
            if self.stop_reason is not None:
                self.say(f"stopping the job: {self.stop_reason}")
                self.processes.end_all()
                code = self.proc.wait()
                return self._status(code)
            procs.reap(self.proc.pid)

    def _dispatch(self, kind: str, ident: int, msg: dict[str, Any] | None) -> None:
        """One event of the loop; nothing a peer sends may end the job's supervision, so
        a fault here is said on stderr (and answered, to a client) and the loop goes on."""
        try:
            self._dispatch_one(kind, ident, msg)
        except Exception as exc:  # the job outlives any one message
            self.say(f"internal error on a {kind} message (the job goes on): "
                     f"{type(exc).__name__}: {exc}")
            if kind == "msg":
                self.ctl.reply(ident, ctl_wire.error(f"internal error: {type(exc).__name__}"))

    def _dispatch_one(self, kind: str, ident: int, msg: dict[str, Any] | None) -> None:
        if kind == "signal":
            self.stop_signal = ident
            self.stop_reason = f"received {signal.Signals(ident).name}"
        elif kind == "eof":
            self.ends.closed(self.reports.on_eof(ident))
        elif msg is None:
            return
        elif kind == "bad":
            self.ctl.reply(ident, msg)
        elif kind == "msg":
            self._on_line(ident, msg)
        elif kind == "adapter":
            self.endpoints.on_adapter(ident, msg["adapter"])
        elif kind == "gate":
            self.endpoints.on_gate(ident, str(msg["what"]), msg.get("info") or {})
        elif kind == "call":
            msg["fn"]()
        elif kind == "command":
            try:
                ctl_wire.check_command(msg)
            except ctl_wire.Bad as exc:
                self.emit({"event": "error", "command": _name(msg), "message": str(exc)})
                return
            self.commands.run(msg)

    def _on_line(self, cid: int, msg: dict[str, Any]) -> None:
        """A line of ctl.sock: a client's command (answered) or a rank's report."""
        try:
            what, _ = ctl_wire.check(msg)
        except ctl_wire.Bad as exc:
            self.ctl.reply(cid, ctl_wire.error(str(exc)))
            return
        if what == "command":
            self.ctl.reply(cid, self.commands.run(msg, reply=True))
        else:
            self.reports.report(cid, msg)

    def _status(self, code: int) -> int:
        if self.stop_signal is not None:
            return 128 + self.stop_signal
        if code < 0:
            return 128 - code
        if code == 0 and self.stop_reason is not None:
            return 1
        return code

    # --- the hang watch ------------------------------------------------------------------

    def _user_holds(self) -> bool:
        """Whether the user holds the job (any thread): a chosen rank stopped, or being
        paused, in the debugger, one waiting for its client, or a rank held at an uncaught
        exception. Peers then wait in their collectives as they should: no hang."""
        waits = self.plan.env.get("RANKDEBUG_WAIT") == "1"
        try:
            if self.conns.held_raised or any(
                    st.stopped or st.pausing or st.waiting is not None
                    for st in list(self.together.ranks.values())):
                return True
            return any(c.waiting or (waits and c.rank is not None and chosen(self.plan, c.rank)
                                     and c.rank not in self.conns.attached and not c.finished)
                       for c in list(self.conns.by_cid.values()))
        except RuntimeError:  # changed as it was read (the loop thread): ask again next tick
            return True

    def _on_hang(self, event: dict[str, Any]) -> None:
        """A ``hang`` or ``hang_over`` of the watch: kept in the job's entry, then said (a
        reader of the event finds the entry saying so)."""
        hang = ({k: event[k] for k in ("seconds", "why", "culprits")}
                if event["event"] == "hang" else None)
        with contextlib.suppress(OSError, registry.RegistryError):
            registry.update_job(self.job, hang=hang)
        self.emit(event)

    def _cleanup(self) -> None:
        self.hang_watch.stop()
        self.processes.end()
        self.ctl.close()
        self.endpoints.close()
        registry.remove_job(self.job)
        if os.path.isdir(self.job_dir):  # a read-only registry: say so, not "killed"
            self.say(f"could not remove the job's registry folder {self.job_dir} (is its "
                     "disk read-only?); rankdebug jobs may list the job until it is removed")
        self.processes.ended_cleanly()  # a clean end: the janitor has nothing to say
        self.ends.close()


def _name(msg: dict[str, Any]) -> str | None:
    name = msg.get("command")
    return name if isinstance(name, str) else None


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"

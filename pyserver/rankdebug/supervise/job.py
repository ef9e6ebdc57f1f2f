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
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import queue
import select
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TextIO

from rankdebug import launcher_table
from rankdebug.debugplan.job_env import JobRun
from rankdebug.runtime import marks, registry, wire
from rankdebug.runtime.port_rule import on_port_or_any
from rankdebug.supervise import ctl_wire, event_text, janitor, procs
from rankdebug.supervise.adapters import Adapter, start_adapter, with_rankdebug_on_path
from rankdebug.supervise.ctl_server import CtlServer
from rankdebug.supervise.gate import Gate
from rankdebug.supervise.hang_watch import HangWatch
from rankdebug.supervise.rank_exits import RankExits
from rankdebug.supervise.remote import RemoteError, RemoteNode, node_argv, node_env
from rankdebug.supervise.together import GROUP_COMMANDS, CommandError, Together

STOP_GRACE_S = 2.5  # SIGTERM -> SIGKILL; the whole stop stays under 5 s
# A chosen rank not started by then is worth a word (RANKDEBUG_MISSING_RANK_S: tests).
MISSING_RANK_S = float(os.environ.get("RANKDEBUG_MISSING_RANK_S", "") or 30.0)
ABNORMAL_GRACE_S = 1.0  # a rank ended badly: give the launcher this long to notice first


@dataclass
class _Conn:
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


# Another node's job ended before this one's: how long the rest may take to end too.
REMOTE_END_WAIT_S = 60.0


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
        self.events: queue.Queue[tuple[str, int, dict[str, Any] | None]] = queue.Queue()
        self.ctl_path = os.path.join(self.job_dir, "ctl.sock")
        self.ctl = CtlServer(self.ctl_path, self.events)
        self._conns: dict[int, _Conn] = {}
        # --attach hit: adapters started here (rank -> Adapter, or the error text).
        self._adapters: dict[int, Adapter | str] = {}
        self._asking: dict[int, int] = {}  # rank -> connection waiting for its adapter
        self._spawned: set[int] = set()  # ranks whose adapter was started
        self._gates: dict[int, Gate] = {}  # --attach hit: each chosen rank's endpoint
        self._janitor: subprocess.Popen[bytes] | None = None
        self._started_at = time.monotonic()
        self._missing_said = False
        self._janitor_fd: int | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self.stop_reason: str | None = None
        self.stop_signal: int | None = None
        self.abnormal_at: float | None = None
        self._emit_lock = threading.Lock()
        self.together = Together(self._gates, self, self.plan.stop)
        self.rank_exits = RankExits()
        self._ranks_scanned_at = 0.0
        self._first_said = False
        self._reader_lost = False
        self._reader_poll = self._watch_reader()
        self._held_raised: set[int] = set()  # ranks held at an uncaught exception
        self._attached: set[int] = set()  # chosen ranks whose client has configured them
        self.hang_watch = HangWatch(self.hang_seconds, self.job, self.job_dir,
                                    self._user_holds,
                                    lambda event: self.post(lambda: self._on_hang(event)))

    # --- output ---------------------------------------------------------------------

    def emit(self, event: dict[str, Any]) -> None:
        with self._emit_lock:
            if self.json_mode:
                try:
                    self.out.write(json.dumps(event) + "\n")
                    self.out.flush()
                except (OSError, ValueError):  # its reader is gone: the loop ends the job
                    self._lose_reader()
            else:
                self.say(event_text.human(event))

    def reader_gone(self) -> bool:
        """Whether the program reading ``--json`` (an editor, a script) has gone: the pipe
        or socket on stdout has no reader left. A file or a terminal never says so (the
        way to run a job on without a reader: README, "Outside VS Code")."""
        if self._reader_lost:
            return True
        if self._reader_poll is None:
            return False
        if not any(ev & (select.POLLERR | select.POLLHUP) for _, ev in self._reader_poll.poll(0)):
            return False
        self._lose_reader()
        return True

    def _watch_reader(self) -> select.poll | None:
        """A poller of stdout when ``--json`` goes to a pipe or socket (a reader that can go
        away); None for a file or a terminal. Looked at once: stdout does not change."""
        if not self.json_mode:
            return None
        try:
            fd = self.out.fileno()
            mode = os.fstat(fd).st_mode
        except (OSError, ValueError, io.UnsupportedOperation):
            return None
        if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
            return None
        poller = select.poll()
        poller.register(fd, 0)  # POLLERR and POLLHUP are always reported
        return poller

    def _lose_reader(self) -> None:
        """Its reader is gone: what is still buffered for stdout goes nowhere, quietly."""
        self._reader_lost = True
        with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, self.out.fileno())
            os.close(null)

    # --- what the group layer (together.py) asks of the job ------------------------------

    def emit_job(self, event: dict[str, Any]) -> None:
        self.emit(dict(event, job=self.job))

    def post(self, fn: Callable[[], None]) -> None:
        self.events.put(("call", 0, {"fn": fn}))

    def record(self, rank: int, fields: dict[str, Any]) -> None:
        found = self._rank_conn(rank)
        node = self._node(found[1].node) if found is not None else None
        if node is not None:  # its pid is that node's: Training Jobs must not look here
            fields = dict(fields, node=node.name, machine=node.host)
        with contextlib.suppress(OSError, registry.RegistryError):
            registry.update_rank(self.job, rank, **fields)

    def say(self, text: str) -> None:
        self.err.write(f"rankdebug: {text}\n")
        self.err.flush()

    def _spawn_adapter(self, rank: int) -> None:
        """Start rank's adapter in the background, once."""
        if rank in self._adapters or rank in self._spawned:
            return
        self._spawned.add(rank)
        threading.Thread(target=self._start_adapter, args=(rank,), daemon=True).start()

    def _start_adapter(self, rank: int) -> None:
        # Tagged for the final sweep; it ends by itself if this process is killed outright.
        env = dict(os.environ, RANKDEBUG_JOB=self.job, RANKDEBUG_SUPERVISOR_PID=str(os.getpid()))
        # Behind a gate (every chosen rank) the adapter is the gate's alone: any free
        # loopback port.
        gated = rank in self._gates or self._chosen(rank)
        port = 0 if gated else self.plan.ports.get(rank, 0)
        host = "127.0.0.1" if gated else self.plan.host
        try:
            adapter: Adapter | str = on_port_or_any(port, lambda p: start_adapter(host, p, env))
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            adapter = f"cannot start the debug adapter: {exc}"
        self.events.put(("adapter", rank, {"adapter": adapter}))

    # --- the job ----------------------------------------------------------------------

    def _start_janitor(self) -> None:
        """The janitor (``janitor.py``): it cleans up if this process is killed outright.
        The pipe's write end stays here, open until this process ends however it ends."""
        read_end, self._janitor_fd = os.pipe()
        try:
            self._janitor = subprocess.Popen(
                [sys.executable, "-m", "rankdebug.supervise.janitor", str(read_end), self.job,
                 self.job_dir, str(os.getpid())],
                env=with_rankdebug_on_path(dict(os.environ)), pass_fds=(read_end,),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, start_new_session=True)
        except OSError as exc:
            self.say(f"no janitor ({exc}): a kill -9 of this process would leave the job")
        finally:
            os.close(read_end)

    def start(self) -> None:
        procs.become_subreaper()
        self._start_janitor()
        stdout = sys.stderr.fileno() if self.json_mode else None
        if self.spread:  # the nodes' watchers, and the control socket there, come first
            for node in self.remotes:
                node.start(None, {"RANKDEBUG_JOB": self.job}, self.plan.cwd, self.ctl_path,
                           stdout)
            with ThreadPoolExecutor(max_workers=min(16, len(self.remotes) or 1)) as pool:
                list(pool.map(lambda node: node.wait_socket(f"{node.dir}/ctl.sock"),
                              self.remotes))
        marks.mark("launch", "spawn")
        self.proc = subprocess.Popen(
            [_executable(self.plan.argv[0], self.plan.env), *self.plan.argv[1:]],
            env=self.plan.env,
            cwd=self.plan.cwd,
            stdin=subprocess.DEVNULL if self.control else None,
            stdout=stdout,
            start_new_session=True,
            # No other thread runs yet (the control socket's starts below), so a preexec_fn
            # is safe here.
            preexec_fn=procs.parent_death_signal(signal.SIGTERM),  # noqa: PLW1509
        )
        for node in self.remotes if not self.spread else ():
            node.start(node_argv(self.plan.argv, node.index),
                       node_env(self.plan.env, dict(os.environ), self.job_dir, node.dir,
                                node.name),
                       self.plan.cwd, self.ctl_path, stdout)
        if self.control:
            threading.Thread(target=self._read_commands, name="rankdebug-stdin",
                             daemon=True).start()

    def _read_commands(self) -> None:
        """``{"command": "attach", "rank": N}``: attach rank N's debugger now (--attach hit);
        ``{"command": "stop"}``: end the job."""
        # A reader of our own: sys.stdin's, held by this daemon thread, would abort the
        # interpreter's shutdown ("could not acquire lock ... at interpreter shutdown").
        stdin = open(sys.stdin.fileno(), "rb", closefd=False)  # noqa: SIM115
        for msg in wire.lines(stdin):
            if isinstance(msg, str):
                self.emit({"event": "error", "command": None, "message": msg})
            else:
                self.events.put(("command", 0, msg))

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
            self._notice_missing_ranks()
            self._watch_ranks()
            if (
                self.abnormal_at is not None
                and self.stop_reason is None
                and time.monotonic() - self.abnormal_at > ABNORMAL_GRACE_S
            ):
                self.stop_reason = "a rank ended before its script finished"
            self._watch_nodes()
            if self.stop_reason is None and self.reader_gone():
                self.stop_reason = ("the program reading its --json output has gone (as when "
                                    "an editor closes)")
            code = self.proc.poll()
            if code is not None:
                code = self._nodes_end(code)
                if code != 0 and self.stop_signal is None:
                    self._say_first_ended()
                if code < 0 and self.stop_signal is None:  # not our doing: say who and how
                    self.say(f"the launcher ({os.path.basename(self.plan.argv[0])}, pid "
                             f"{self.proc.pid}) was killed by {_signal_name(-code)}; ending "
                             "what is left of the job")
                return self._status(code)
            if self.stop_reason is not None:
                self.say(f"stopping the job: {self.stop_reason}")
                self._end_all()
                code = self.proc.wait()
                return self._status(code)
            procs.reap(self.proc.pid)

    def _watch_nodes(self) -> None:
        """Another node's part of the job ended badly (or its SSH connection was lost):
        the job ends, saying which node."""
        if self.stop_reason is not None:
            return
        for node in self.remotes:
            code = node.runner.poll() if node.runner is not None else None
            if code is None or code == 0:
                continue
            what = (f"the SSH connection to {node.host} was lost" if code == 255
                    else f"the job there ended with status {code}")
            self.stop_reason = f"{node.name} ({node.host}): {what}"
            return

    def _nodes_end(self, code: int) -> int:
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

    def _node(self, name: str | None) -> RemoteNode | None:
        return next((n for n in self.remotes if n.name == name), None) if name else None

    def _watch_ranks(self) -> None:
        """New rank processes get watched (``rank_exits``): every second for the first 30 s,
        when ranks start, then every 10 s (an elastic restart); the scan reads /proc."""
        now = time.monotonic()
        every = 1.0 if now - self._started_at < 30 else 10.0
        if self.stop_reason is not None or now - self._ranks_scanned_at < every:
            return
        self._ranks_scanned_at = now
        self.rank_exits.watch(procs.rank_pids(procs.descendants(os.getpid())))

    def _say_first_ended(self) -> None:
        """The job failed: name the rank that ended first (once)."""
        first = self.rank_exits.first()
        if first is None or self._first_said:
            return
        self._first_said = True
        self.say(f"rank {first.rank} (pid {first.pid}) ended first; the launcher's own "
                 "message says how it ended")

    def _notice_missing_ranks(self) -> None:
        """Say once, after ``MISSING_RANK_S``, which chosen ranks never started and what the
        launcher did start: a launcher that starts fewer processes than its flags say
        (``accelerate launch --cpu`` starts one) would otherwise leave the user waiting
        without a word."""
        if self._missing_said or not self.plan.chosen:
            return
        if time.monotonic() - self._started_at < MISSING_RANK_S:
            return
        self._missing_said = True
        seen = {c.rank for c in self._conns.values() if c.rank is not None}
        missing = [r for r in self.plan.chosen if r not in seen]
        if not missing:
            return
        started = procs.ranks_started(procs.descendants(os.getpid()))
        what = (f"the launcher has started rank(s) {', '.join(map(str, started))} so far"
                if started else "the launcher has started no rank so far")
        self.say(f"rank(s) {', '.join(map(str, missing))} chosen but not started after "
                 f"{MISSING_RANK_S:.0f} s; {what}. The launcher may start fewer processes "
                 f"than the command asks for (accelerate launch --cpu starts one, for "
                 f"example), or the job is still loading.")

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
            self._on_eof(ident)
        elif msg is None:
            return
        elif kind == "bad":
            self.ctl.reply(ident, msg)
        elif kind == "msg":
            self._on_line(ident, msg)
        elif kind == "adapter":
            self._on_adapter(ident, msg["adapter"])
        elif kind == "gate":
            self._on_gate(ident, str(msg["what"]), msg.get("info") or {})
        elif kind == "call":
            msg["fn"]()
        elif kind == "command":
            try:
                ctl_wire.check_command(msg)
            except ctl_wire.Bad as exc:
                self.emit({"event": "error", "command": _name(msg), "message": str(exc)})
                return
            self._on_command(msg)

    def _on_line(self, cid: int, msg: dict[str, Any]) -> None:
        """A line of ctl.sock: a client's command (answered) or a rank's report."""
        try:
            what, _ = ctl_wire.check(msg)
        except ctl_wire.Bad as exc:
            self.ctl.reply(cid, ctl_wire.error(str(exc)))
            return
        if what == "command":
            self.ctl.reply(cid, self._on_command(msg, reply=True))
        else:
            self._on_msg(cid, msg)

    def _on_eof(self, cid: int) -> None:
        conn = self._conns.pop(cid, None)
        if conn is not None and conn.rank is not None:
            self._held_raised.discard(conn.rank)
        if (conn is not None and conn.rank is not None and conn.chosen and not conn.finished
                and launcher_table.get(self.plan.launcher).rank_end_fails):
            first = self.rank_exits.first_before(conn.rank)
            if first is None:
                self.say(f"rank {conn.rank} ended before its script finished")
            else:  # the launcher stopped it: the user wants the rank that failed
                self._first_said = True
                self.say(f"rank {conn.rank} ended before its script finished: rank "
                         f"{first.rank} (pid {first.pid}) had ended first, and the launcher "
                         f"stops every rank once one fails (its own message says how rank "
                         f"{first.rank} ended)")
            if self.abnormal_at is None:
                self.abnormal_at = time.monotonic()

    def _status(self, code: int) -> int:
        if self.stop_signal is not None:
            return 128 + self.stop_signal
        if code < 0:
            return 128 - code
        if code == 0 and self.stop_reason is not None:
            return 1
        return code

    def _on_msg(self, cid: int, msg: dict[str, Any]) -> None:
        event = msg.get("event")
        rank = msg.get("rank")
        if not isinstance(rank, int):
            return
        conn = self._conns.setdefault(cid, _Conn())
        conn.rank = rank
        node = msg.get("node")
        if isinstance(node, str) and self._node(node) is not None:
            conn.node = node
        role = msg.get("role")  # a Ray actor's (debug.role): said once, for the rank's label
        if isinstance(role, str) and role and role[:40] != conn.role:
            conn.role = role[:40]
            self.record(rank, {"role": conn.role})
            self.emit({"event": "role", "rank": rank, "role": conn.role, "job": self.job})
        if event in ("armed", "adapter", "raised"):  # answered, not recorded here
            {"armed": self._on_armed, "adapter": self._on_adapter_asked,
             "raised": self._on_raised}[event](rank, cid, conn, msg)
            return
        if conn.node is not None and event in ("listening", "handler"):  # another node's
            {"listening": self._remote_listening,
             "handler": self._remote_handler}[event](rank, conn, msg)
            return
        fields: dict[str, Any] = {"pid": msg.get("pid")}
        if event == "started":
            conn.chosen = msg.get("chosen") is not False
            conn.pid = msg.get("pid")
            local = msg.get("local_rank")
            conn.local_rank = local if isinstance(local, int) else None
            fields.update(state="running", local_rank=msg.get("local_rank"),
                          world_size=msg.get("world_size"))
        elif event == "handler":
            path = msg.get("socket")
            conn.socket = path if isinstance(path, str) else None
            # A chosen rank's socket serves eval and stacks; it is not how it is debugged.
            fields.update(socket=conn.socket,
                          armed=conn.socket is not None and msg.get("armed") is not False)
        elif event == "listening":
            fields.update(state="listening", host=msg.get("host"), port=msg.get("port"))
            self.emit(
                {
                    "event": "listening",
                    "rank": rank,
                    "host": msg.get("host"),
                    "port": msg.get("port"),
                    "pid": msg.get("pid"),
                    "job": self.job,
                }
            )
        elif event == "attached":
            fields.update(state="attached")
            self._attached.add(rank)
            gate = self._gates.get(rank)
            if gate is None or gate.traced_from_start:  # else the gate reports it itself
                self.emit({"event": "attached", "rank": rank, "pid": msg.get("pid"),
                           "job": self.job})
        elif event == "exit":
            conn.finished = True
            fields.update(state="exited")
        else:
            return
        self.record(rank, fields)

    def _on_adapter_asked(self, rank: int, cid: int, conn: _Conn,
                          _msg: dict[str, Any]) -> None:
        if conn.node is not None:  # debugpy listens there, on the node's loopback
            self.ctl.reply(cid, {"error": "on another node: listen there"})
            return
        found = self._adapters.get(rank)
        if found is None:
            self._spawn_adapter(rank)  # an armed rank told to attach: started now
            self._asking[rank] = cid
        else:
            self._give_adapter(rank, cid, found)

    def _on_raised(self, rank: int, _cid: int, conn: _Conn, msg: dict[str, Any]) -> None:
        """Held for inspection (runtime/hold.py): alive, its registry entry written by the
        rank itself (after this supervisor's earlier updates); a rank on another node cannot
        reach this registry, so it is recorded here."""
        said = {k: msg.get(k) for k in ("exception", "message", "file", "line", "function")}
        self._held_raised.add(rank)
        if conn.node is not None:
            self.record(rank, {"pid": msg.get("pid", conn.pid), "state": "raised",
                               "raised": said})
        if self.json_mode:  # for a person, the rank says it itself on the same stderr
            self.emit({"event": "raised", "rank": rank, "pid": msg.get("pid", conn.pid),
                       **said, "job": self.job})

    def _on_command(self, cmd: dict[str, Any], reply: bool = False) -> dict[str, Any]:
        """One command from --control's stdin or a client of ctl.sock; what to answer the
        latter (stdin's errors are ``error`` events)."""
        name = cmd.get("command")
        if name in GROUP_COMMANDS:
            try:
                acted = self.together.command(cmd)
            except CommandError as exc:
                if not reply:
                    self.emit({"event": "error", "command": name, "message": str(exc)})
                return ctl_wire.error(str(exc))
            return {"ok": True, "ranks": acted}
        if name == "stop":
            self.stop_reason = "asked to stop"
        elif name == "attach":
            rank = cmd.get("rank")
            conn = next((c for c in self._conns.values() if c.rank == rank), None)
            if conn is not None and conn.pid is not None and conn.attach_signal is not None:
                self._signal_attach(conn)
            elif conn is not None and conn.socket is not None:
                threading.Thread(target=self._attach_armed, args=(rank, conn.socket),
                                 daemon=True).start()
            else:
                message = (f"rank {rank} is not waiting for an attach" if conn is not None
                           else f"the job has no rank {rank} (yet)")
                if not reply:
                    self.emit({"event": "error", "command": "attach", "rank": rank,
                               "message": message})
                return ctl_wire.error(message)
        elif name != "ping":
            message = f"unknown command {name!r}"
            if not reply:
                self.emit({"event": "error", "command": name, "message": message})
            return ctl_wire.error(message)
        return {"ok": True}

    def _attach_armed(self, rank: int, path: str) -> None:
        """Tell an armed rank to attach; its ``listening`` comes back through the control
        socket like any rank's."""
        try:
            wire.ask(path, {"command": "attach"}, timeout=60.0)
        except wire.WireError as exc:
            self.emit({"event": "error", "command": "attach", "rank": rank,
                       "message": str(exc)})

    def _on_adapter(self, rank: int, adapter: Adapter | str) -> None:
        self._adapters[rank] = adapter
        asking = self._asking.pop(rank, None)
        if not isinstance(adapter, Adapter):
            self.say(f"rank {rank}: {adapter}")
            if asking is not None:
                self.ctl.reply(asking, {"error": adapter})
            return
        if asking is not None:
            self._give_adapter(rank, asking, adapter)
        if rank in self._gates:
            return  # the gate's port is the one reported
        pid = self.pid_of(rank)
        if self._chosen(rank):
            # --attach start: a gate in front all the same (ranks together), relaying from
            # its client's first message.
            gate = self._open_gate(rank, pid)
            if gate is not None:
                found = self._rank_conn(rank)
                gate.local_rank = found[1].local_rank if found is not None else None
                gate.traced_from_start = True
                gate.go_live(adapter.client_host, adapter.client_port)
                return
        self.record(rank, {"state": "listening", "host": adapter.client_host,
                           "port": adapter.client_port, "pid": pid})
        self.emit({"event": "listening", "rank": rank, "host": adapter.client_host,
                   "port": adapter.client_port, "pid": pid, "job": self.job})

    # --- the hang watch ------------------------------------------------------------------

    def _user_holds(self) -> bool:
        """Whether the user holds the job (any thread): a chosen rank stopped, or being
        paused, in the debugger, one waiting for its client, or a rank held at an uncaught
        exception. Peers then wait in their collectives as they should: no hang."""
        waits = self.plan.env.get("RANKDEBUG_WAIT") == "1"
        try:
            if self._held_raised or any(st.stopped or st.pausing or st.waiting is not None
                                        for st in list(self.together.ranks.values())):
                return True
            return any(c.waiting or (waits and c.rank is not None and self._chosen(c.rank)
                                     and c.rank not in self._attached and not c.finished)
                       for c in list(self._conns.values()))
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

    # --- gates (--attach hit) ------------------------------------------------------------

    def _on_armed(self, rank: int, _cid: int, conn: _Conn, msg: dict[str, Any]) -> None:
        """A chosen rank runs untraced: open its gate, start its adapter; it may wait for
        its client's breakpoints."""
        conn.pid = msg.get("pid")
        sig = msg.get("signal")
        conn.attach_signal = sig if isinstance(sig, int) else None
        conn.waiting = msg.get("wait") is True
        gate = self._open_gate(rank, conn.pid, conn.node)
        if gate is not None:
            gate.local_rank = conn.local_rank
        if conn.node is None:
            self._spawn_adapter(rank)
        if gate is not None and conn.waiting and gate.plan()["configured"]:
            self._go(rank)

    def _remote_listening(self, rank: int, conn: _Conn, msg: dict[str, Any]) -> None:
        """A rank on another node listens on that node's loopback: its gate (here, opened
        now for --attach start) relays to it through the node's SSH connection."""
        node = self._node(conn.node)
        port = msg.get("port")
        if node is None or not isinstance(port, int):
            return
        started = rank not in self._gates
        gate = self._open_gate(rank, conn.pid, conn.node)
        if gate is None:
            return
        gate.local_rank = conn.local_rank
        if started:
            gate.traced_from_start = True

        self._forwarded(f"rankdebug-forward-{rank}", lambda: node.forward(port),
                        lambda path: gate.go_live(path, 0), f"rank {rank}: ")

    def _remote_handler(self, rank: int, conn: _Conn, msg: dict[str, Any]) -> None:
        """A rank on another node serves its handler on a socket there: forwarded to one in
        the job's folder here, recorded as the rank's, so eval, compare, stacks and attach
        reach it as a local rank's."""
        node = self._node(conn.node)
        path = msg.get("socket")
        if node is None or not isinstance(path, str):
            return
        armed = msg.get("armed") is not False
        pid = msg.get("pid")

        def done(here: str) -> None:
            if conn.finished:  # the rank ended meanwhile
                return
            conn.socket = here
            self.record(rank, {"pid": pid, "socket": here, "armed": armed})

        self._forwarded(f"rankdebug-handler-{rank}", lambda: node.forward_socket(path),
                        lambda here: self.post(lambda: done(here)),
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
                self.post(lambda: self.say(said))
                return
            then(path)

        threading.Thread(target=run, name=name, daemon=True).start()

    def _open_gate(self, rank: int, pid: int | None, node: str | None = None) -> Gate | None:
        """The rank's debug endpoint, opened (and reported ``listening``) once."""
        gate = self._gates.get(rank)
        if gate is not None:
            return gate
        breaks: dict[str, set[int]] = {}
        for path, line in self.plan.breaks:
            breaks.setdefault(path, set()).add(line)
        try:
            gate = Gate(rank, self.plan.host, self.plan.ports.get(rank, 0), breaks,
                        lambda what, info: self.events.put(
                            ("gate", rank, {"what": what, "info": info or {}})),
                        preset=self.preset)
        except OSError as exc:
            self.say(f"rank {rank}: cannot listen for a debugger: {exc}")
            return None
        self._gates[rank] = gate
        gate.start()
        self.record(rank, {"state": "listening", "host": gate.host, "port": gate.port,
                           "pid": pid, "node": node})
        event: dict[str, Any] = {"event": "listening", "rank": rank, "host": gate.host,
                                 "port": gate.port, "pid": pid, "job": self.job}
        if node is not None:
            event["node"] = node
        self.emit(event)
        return gate

    def _chosen(self, rank: int) -> bool:
        """Debugged from the start (not an armed rank told to attach later)."""
        return self.plan.chosen is not None and rank in self.plan.chosen

    def _rank_conn(self, rank: int) -> tuple[int, _Conn] | None:
        return next(((cid, c) for cid, c in self._conns.items() if c.rank == rank), None)

    def _go(self, rank: int) -> None:
        """Tell a waiting rank its client's breakpoints: it runs on untraced."""
        found = self._rank_conn(rank)
        gate = self._gates.get(rank)
        if found is None or gate is None or not found[1].waiting:
            return
        cid, conn = found
        conn.waiting = False
        gate.went = gate.plan()
        self.ctl.reply(cid, dict(gate.went, event="go"))

    def _on_gate(self, rank: int, what: str, info: dict[str, Any]) -> None:
        found = self._rank_conn(rank)
        conn = found[1] if found is not None else None
        if what in ("stopped", "continued", "resumed", "disconnected"):
            self.together.on_gate(rank, what, info)
            gate = self._gates.get(rank)
            if what == "disconnected" and gate is not None:
                # The rank runs on behind its gate, open to the next client: listening again.
                self.record(rank, {"state": "listening", "host": gate.host, "port": gate.port})
        elif what == "configured":
            self._attached.add(rank)
            pid = conn.pid if conn is not None else None
            self.record(rank, {"state": "attached", "pid": pid})
            self.emit({"event": "attached", "rank": rank, "pid": pid, "job": self.job})
            if conn is not None and not conn.waiting and self._unserved(rank):
                self._signal_attach(conn)  # --no-wait: the rank runs with --break lines only
            self._go(rank)
        elif what in ("changed", "pause"):
            if conn is not None and conn.waiting:
                if what == "pause":
                    self._go(rank)
                return
            # New lines may have no hit-hook: the rank attaches now, where it is.
            if conn is not None:
                self._signal_attach(conn)
        elif what == "terminate" and conn is not None and conn.pid is not None:
            self._kill(conn, signal.SIGTERM)

    def _unserved(self, rank: int) -> bool:
        """The client wants what the rank's hit-hooks (its --break lines) cannot give."""
        gate = self._gates.get(rank)
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
        found = self._rank_conn(rank)
        gate = self._gates.get(rank)
        if found is None or gate is None or found[1].attach_signal is None:
            return False
        gate.held = True
        if found[1].waiting:
            self._go(rank)
        else:
            self._signal_attach(found[1])
        return True

    def pid_of(self, rank: int) -> int | None:
        found = self._rank_conn(rank)
        return found[1].pid if found is not None else None

    def _signal_attach(self, conn: _Conn) -> None:
        if conn.pid is not None and conn.attach_signal is not None:
            self._kill(conn, conn.attach_signal)

    def _kill(self, conn: _Conn, sig: int) -> None:
        """Signal a rank's process, here or on its node (over its SSH connection)."""
        if conn.pid is None:
            return
        node = self._node(conn.node)
        if node is not None:
            pid = conn.pid
            threading.Thread(target=node.kill, args=(pid, sig), daemon=True).start()
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(conn.pid, sig)

    def _give_adapter(self, rank: int, cid: int, adapter: Adapter | str) -> None:
        """Answer a rank that connects to its adapter; its gate relays from now on."""
        if not isinstance(adapter, Adapter):
            self.ctl.reply(cid, {"error": adapter})
            return
        reply = adapter.for_rank()
        gate = self._gates.get(rank)
        if gate is not None:
            reply["pause"] = gate.plan()["pause"]
            threading.Thread(target=gate.go_live,
                             args=(adapter.client_host, adapter.client_port),
                             daemon=True).start()
        self.ctl.reply(cid, reply)

    def _job_processes(self) -> list[int]:
        me = os.getpid()
        found = set(procs.descendants(me))
        found.update(procs.with_env("RANKDEBUG_JOB", self.job))
        found.discard(me)
        if self._janitor is not None:  # it ends on its own once this process has ended
            found.discard(self._janitor.pid)
        return sorted(found)

    def _end_all(self) -> None:
        for node in self.remotes:  # their runners end the job there as this one ends here
            node.stop()
        keep = self.proc.pid if self.proc is not None else None
        left = procs.end_all(self._job_processes, keep, STOP_GRACE_S)
        if left:
            self.say(f"processes still alive after SIGKILL: {left}")

    def _cleanup(self) -> None:
        self.hang_watch.stop()
        if self.proc is not None and self.proc.poll() is None:
            self._end_all()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=1.0)
        # Whatever the launcher left behind: debugpy adapters, orphaned ranks.
        if self._job_processes():
            self._end_all()
        for node in self.remotes:
            node.close()
        procs.reap(None)
        self.ctl.close()
        for gate in self._gates.values():
            gate.close()
        registry.remove_job(self.job)
        if os.path.isdir(self.job_dir):  # a read-only registry: say so, not "killed"
            self.say(f"could not remove the job's registry folder {self.job_dir} (is its "
                     "disk read-only?); rankdebug jobs may list the job until it is removed")
        if self._janitor_fd is not None:  # a clean end: the janitor has nothing to say
            with contextlib.suppress(OSError):
                os.write(self._janitor_fd, janitor.CLEAN)
        self.rank_exits.close()


def _name(msg: dict[str, Any]) -> str | None:
    name = msg.get("command")
    return name if isinstance(name, str) else None


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _executable(name: str, env: dict[str, str]) -> str:
    """``name`` as the job's PATH finds it; else the one beside this Python (``torchrun``
    of the virtual environment rankdebug runs from, when that is not activated)."""
    if os.sep in name or shutil.which(name, path=env.get("PATH", os.defpath)):
        return name
    beside = os.path.join(os.path.dirname(sys.executable), name)
    return beside if os.access(beside, os.X_OK) else name

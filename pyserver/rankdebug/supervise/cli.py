"""``rankdebug launch``: run a training command with chosen ranks waiting for a debugger.

    rankdebug launch --ranks 1,3 --json -- torchrun --nproc_per_node 4 train.py
    rankdebug launch --ranks local0 --file train.sh --line 12

stdout (with ``--json``) carries one JSON object per line: ``{"event": "job", ...}`` first,
``{"event": "listening", "rank", "host", "port", "pid", "job"}`` per chosen rank as soon as
its port accepts connections, ``{"event": "attached", ...}`` when a client has configured
it, and ``{"event": "exited", "code": N}`` last. The job's own stdout goes to stderr then.
Errors before the job starts: exit status 2 and ``{"error": {...}}`` on stdout.

Attach modes. ``hit`` (the default): a chosen rank runs without a tracer. The port its
``listening`` event names is a gate in this process (``rankdebug.supervise.gates.gate``) that
answers the client's ``initialize``, ``attach``, breakpoints and ``configurationDone``
itself; the rank waits for those breakpoints before its script runs and plants hit-hooks for
them (``rankdebug.runtime.hithook``). At the first hook, Pause, a breakpoint added on a line
without a hook, or an uncaught exception, the rank connects to its debugpy adapter and the
gate hands the session over. ``--break FILE:LINE`` lines are breakpoints like the client's
own. ``start``: debugpy listens before the script runs and the rank is traced from its first
import (an escape hatch).

Armed jobs (``--arm``): every rank also serves a control socket in the job's folder
(``rankdebug.runtime.handler``) and runs without a debugger until ``rankdebug attach``,
``eval`` or ``stacks`` asks it something (or ``{"command": "attach", "rank": N}`` with
``--control``); ``--ranks`` then defaults to none.

``RANKDEBUG_PRESET`` (a JSON object, ``rankdebug.supervise.gates.preset``): the client's
breakpoints and exception filters, sent with the launch by an editor that knows them; the
chosen ranks then run at once instead of waiting for their client's breakpoints.
``RANKDEBUG_WARM`` (``rankdebug.warm``, read by ``rankdebug.cli``): started ahead, the launch
to run comes on a pipe.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import rankdebug
from rankdebug import debugplan, launcher_table
from rankdebug.command import command_words, plan_args
from rankdebug.command.entry import script_missing, script_target, where
from rankdebug.command.plan import LaunchPlan
from rankdebug.debugplan import DebugPlan, LaunchOptions, Origin
from rankdebug.debugplan.job_env import JobPlaces, JobRun, command_argv, job_run
from rankdebug.debugplan.options import DEFAULT_HANG_S, STOP_MODES, parse_hang
from rankdebug.errors import BadInput, RankdebugError, report
from rankdebug.packages import package_dir
from rankdebug.runtime import marks, registry
from rankdebug.ssh import SshOptions, parse_hosts
from rankdebug.supervise import ports as portmod
from rankdebug.supervise.boot import prepare_boot_dir
from rankdebug.supervise.gates import preset as gate_preset
from rankdebug.supervise.job import Supervisor
from rankdebug.supervise.nodes.remote import RemoteNode
from rankdebug.supervise.nodes.spread import node_map, other_hosts
from rankdebug.supervise.nodes.spread import spread as spread_job

PROG = "rankdebug launch"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = __doc__.split("\n\n")[0] if __doc__ else None
    parser.add_argument("--ranks", default=None,
                        help="ranks to debug: all, N, A-B, localN, comma-joined, or a "
                        "selector by the parallel sizes the command gives: tp=0, pp=1 tp=0-3, "
                        "dp=0 and tp=0, pp=last (default 0; with --arm, none)")
    parser.add_argument("--arm", action="store_true",
                        help="every rank serves a control socket so that it can be told later "
                        "to attach a debugger, evaluate an expression or report its stack "
                        "(rankdebug attach/eval/stacks); no debugger runs until then")
    parser.add_argument("--json", action="store_true", help="JSON lines on stdout")
    parser.add_argument("--no-wait", action="store_true",
                        help="chosen ranks listen but run on without waiting for a client")
    parser.add_argument("--host", default=debugplan.options.LOOPBACK,
                        help="address to listen on")
    parser.add_argument("--base-port", type=int, default=0,
                        help="first port to try for the chosen ranks (default: any free port)")
    parser.add_argument("--collective-timeout", type=float, default=None, metavar="SECONDS",
                        help="raise process-group timeouts to this (default one day; 0: off)")
    parser.add_argument("--hang-seconds", default=None, metavar="SECONDS",
                        help="say when no rank has made progress for this long: a hang event "
                        "naming the culprit ranks, once per hang, and hang_over when it goes "
                        "on (default 120; 0: off). Never while a chosen rank is stopped in "
                        "the debugger")
    parser.add_argument("--break", dest="breaks", action="append", default=[],
                        metavar="FILE:LINE", help="a breakpoint known at start (repeatable)")
    parser.add_argument("--attach", choices=("auto", "start", "hit"), default="auto",
                        help="hit (auto, the default): chosen ranks run without a tracer until "
                        "a breakpoint, Pause or an uncaught exception needs one; start: "
                        "debugpy listens before the script runs (traced from the start)")
    parser.add_argument("--stop", choices=STOP_MODES, default="together",
                        help="together (the default): when a chosen rank stops (breakpoint, "
                        "exception, step, pause), the other chosen ranks are paused too; "
                        "alone: they run on")
    parser.add_argument("--control", action="store_true",
                        help="read JSON commands on stdin, one per line: continue, pause, "
                        "step (kind: over, in, out) and run-to (file, line) for ranks "
                        '(e.g. {"command": "step", "ranks": "0-3"}), stop-mode (together, '
                        'alone), attach (rank) and stop; the job\'s folder has the same '
                        "commands on its ctl.sock")
    parser.add_argument("--hosts", default=None, metavar="HOST[,HOST...]",
                        help="the job's other nodes, reached over SSH (this machine is node "
                        "0): the same command runs on each with its --node_rank, and chosen "
                        "ranks there are debugged from here; for srun, mpirun and deepspeed, "
                        "which start those ranks themselves, the nodes are made ready for "
                        "them (default: the hosts the command or the Slurm allocation names; "
                        "--hosts '' for none)")
    parser.add_argument("--ssh-config", default=None, metavar="FILE",
                        help="an SSH configuration file for --hosts (ssh -F)")
    parser.add_argument("--ssh-option", dest="ssh_options", action="append", default=[],
                        metavar="KEY=VALUE", help="an SSH option for --hosts (ssh -o; "
                        "repeatable)")
    parser.add_argument("--file", help="a script holding the launch command")
    parser.add_argument("--line", type=int, help="1-based line of the command in --file")
    parser.add_argument("command", nargs=argparse.REMAINDER,
                        help="-- followed by the launch command")


def _command(args: argparse.Namespace) -> tuple[Origin, LaunchPlan]:
    """Where the command comes from, and its launch plan (planned with our environment)."""
    try:
        plan = plan_args(args, caller_env=dict(os.environ), cwd=Path.cwd())
    except OSError as exc:
        raise BadInput(str(exc)) from exc
    return (Origin.of_file(args.file) if args.file
            else Origin.of_argv(command_words(args.command))), plan


def check_before_start(plan: LaunchPlan) -> None:
    """Refuse, before anything starts, a command that would fail at once: one the plan has
    an error about (a flag without its value), or whose entry script is not there. Started,
    it would end in the launcher's traceback and ranks killed for another's failure."""
    command_argv(plan)  # words whose value is unknown here come first: nothing else is sure
    for diag in plan.diagnostics:
        if diag.severity == "error":
            raise BadInput(diag.message, diag.span.start_line + 1, diag.span.start_col + 1,
                           code=diag.code)
    target = script_target(plan.entry)
    if target is None or plan.cwd is None or plan.entry is None:
        return
    cwd = Path(plan.cwd)
    if script_missing(target, cwd):
        span = plan.entry.target.span
        raise BadInput(f"the entry script {target} does not exist{where(target, cwd)}",
                       span.start_line + 1, span.start_col + 1, code="missing-script")


def debug_plan(args: argparse.Namespace) -> DebugPlan:
    """The debug plan of ``rankdebug launch``'s arguments."""
    origin, plan = _command(args)
    options = LaunchOptions(
        host=args.host,
        base_port=args.base_port,
        wait=not args.no_wait,
        collective_timeout=args.collective_timeout,
        attach=args.attach,
        arm=args.arm,
        breaks=tuple(args.breaks),
        stop=args.stop,
        hosts=parse_hosts(args.hosts),
        ssh_config=args.ssh_config,
        hang_seconds=(DEFAULT_HANG_S if args.hang_seconds is None
                      else parse_hang(args.hang_seconds)),
    )
    caller = debugplan.Caller(cwd=str(Path.cwd()), cli=(sys.executable, "-m", "rankdebug"))
    dplan = debugplan.make(plan, origin, caller, args.ranks or None, options)
    check_before_start(plan)  # after the ranks and options: those are the user's first words
    return dplan


def _reserve(dplan: DebugPlan) -> tuple[str, str, dict[int, int]]:
    """A new job in the registry with ports for the chosen ranks: (job, folder, ports)."""
    job = registry.new_job_id()
    opts = dplan.options
    try:
        with portmod.registry_lock():  # checks the registry's folder is the user's alone
            registry.check_socket_room(os.path.join(registry.location(), job))
            registry.prune()  # folders of jobs whose supervisor was killed outright
            ports = portmod.choose(dplan.selection.ranks or [], opts.host, opts.base_port,
                                   portmod.ports_in_registry())
            job_dir = registry.create_job(job, {"pid": os.getpid(), "state": "starting"})
            for rank, port in ports.items():
                registry.write_rank(job, {"rank": rank, "port": port, "host": opts.host,
                                          "state": "starting"})
    except (OSError, registry.RegistryError) as exc:
        raise _registry_failed(job, exc, opts.host) from None
    return job, job_dir, ports


def _registry_failed(job: str, exc: OSError | registry.RegistryError,
                     host: str | None = None) -> BadInput:
    """What a registry that cannot be written (full, read-only, not the user's), or ports
    that cannot be reserved on ``host``, give: the job's entry removed, and one line."""
    with contextlib.suppress(OSError, registry.RegistryError):
        registry.remove_job(job)
    if isinstance(exc, registry.RegistryError):
        return BadInput(str(exc))
    if host is not None and not exc.filename:  # no file: the ports, not the disk
        return BadInput(f"cannot reserve ports on {host}: {exc.strerror or exc}")
    return BadInput(registry.unwritable(exc))


def _register(job: str, dplan: DebugPlan, run: JobRun) -> None:
    """The job's and its chosen ranks' full registry entries."""
    plan, start_time = dplan.plan, time.time()
    registry.create_job(job, {
        "pid": os.getpid(), "state": "running", "command": run.argv, "cwd": run.cwd,
        "launcher": run.launcher, "ranks": run.chosen, "rank_spec": run.rank_spec,
        "world_size": plan.world_size, "start_time": start_time, "armed": dplan.options.arm,
        "hang": None,  # {seconds, why, culprits} while the hang watch says it hangs
    })
    infos = {r.rank: r for r in plan.ranks}
    for rank, port in run.ports.items():
        known = infos.get(rank)
        registry.write_rank(job, {
            "rank": rank, "local_rank": known.local_rank if known else None,
            "world_size": plan.world_size, "host": run.host, "port": port, "pid": None,
            "state": "starting", "command": run.argv, "cwd": run.cwd,
            "start_time": start_time,
        })


def _start(dplan: DebugPlan) -> tuple[str, str, JobRun]:
    """Reserve the job, fill its boot folder and make the process to start."""
    job, job_dir, ports = _reserve(dplan)
    try:
        boot, dbg = prepare_boot_dir(Path(job_dir) / "boot")
        places = JobPlaces(job=job, boot=boot, debugpy_dir=dbg,
                           ctl=os.path.join(job_dir, "ctl.sock"),
                           arm_dir=job_dir if dplan.options.arm else None, ports=ports)
        return job, job_dir, job_run(dplan, places)
    except (OSError, registry.RegistryError) as exc:
        registry.remove_job(job)
        raise BadInput(str(exc)) from exc
    except RankdebugError:
        registry.remove_job(job)
        raise


def _connect_nodes(hosts: list[str], ssh: SshOptions, job: str, job_dir: str,  # noqa: PLR0913
                   spread: bool, named: bool) -> list[RemoteNode]:
    """Connect to the other nodes and make the job's folder there, all at once, before
    anything starts: a node that cannot be reached is an error naming it (what was made on
    the others is removed); one the command named, not ``--hosts``, is said and left out,
    its ranks not debugged. ``spread``: the launcher here starts the ranks there (the folder
    at the same path; see supervise/nodes/remote.py)."""
    packages = {"rankdebug": str(Path(rankdebug.__file__).resolve().parent),
                "dbg/debugpy": package_dir("debugpy")}
    boot = os.path.join(job_dir, "boot", "sitecustomize.py")
    nodes = [RemoteNode(host, i, ssh, job_dir) for i, host in enumerate(hosts, start=1)]

    def ready(node: RemoteNode) -> BaseException | bool:
        try:
            node.connect()
            return node.prepare(job, packages, boot, spread)
        except (RankdebugError, OSError) as exc:
            return exc

    with ThreadPoolExecutor(max_workers=min(16, len(nodes) or 1)) as pool:
        answers = list(pool.map(ready, nodes))
    kept: list[RemoteNode] = []
    failed: BaseException | None = None
    for node, answer in zip(nodes, answers, strict=True):
        if answer is True:
            kept.append(node)
            continue
        node.discard()
        if answer is False:
            sys.stderr.write(f"rankdebug: {node.host} sees this machine's job folder "
                             f"({job_dir}): it is taken as this machine\n")
        elif named:
            sys.stderr.write(f"rankdebug: {answer}; its ranks run without the debugger "
                             "(give the hosts to reach with --hosts)\n")
        elif failed is None:
            failed = answer
    if failed is not None:
        for node in kept:
            node.discard()
        if isinstance(failed, RankdebugError):
            raise failed
        raise BadInput(f"cannot reach the other nodes: {failed}") from failed
    for i, node in enumerate(kept, start=1):  # spread jobs: names only (no --node_rank)
        node.index = i
    return kept


def run(args: argparse.Namespace) -> int:
    marks.mark("launch", "run")
    # Never the job's: its ranks get what the gates make of it.
    preset_text = os.environ.pop(gate_preset.ENV, None)
    try:
        preset = gate_preset.parse(preset_text) if preset_text else None
        dplan = debug_plan(args)
        hosts = list(dplan.options.hosts)
        job, job_dir, job_proc = _start(dplan)
    except RankdebugError as exc:
        return report(exc, as_json=args.json, prog=PROG)
    nodes: list[RemoteNode] = []
    spread = launcher_table.get(job_proc.launcher).spreads
    named = False  # the hosts come from the command (mpirun -H, srun -w, a hostfile)
    if not hosts and spread and args.hosts is None and dplan.plan.nnodes != 1:
        hosts = other_hosts(dplan.plan.hosts or ())
        named = bool(hosts)
    if hosts:
        try:
            nodes = _connect_nodes(hosts, SshOptions(args.ssh_config, tuple(args.ssh_options)),
                                   job, job_dir, spread, named)
            if nodes and spread:
                spread_job(job_proc, os.environ,
                           node_map({n.name: n.hostname for n in nodes}, socket.gethostname()),
                           job_dir, launcher=job_proc.launcher)
        except (RankdebugError, OSError) as exc:
            for node in nodes:
                node.discard()
            registry.remove_job(job)
            if isinstance(exc, OSError):
                exc = BadInput(f"cannot prepare the other nodes: {exc}")
            return report(exc, as_json=args.json, prog=PROG)
    nnodes = dplan.plan.nnodes
    if not nodes and isinstance(nnodes, int) and nnodes > 1:
        sys.stderr.write(
            f"rankdebug: this command runs on {nnodes} nodes; {job_proc.launcher} starts the "
            "ranks of the others, which cannot be debugged unless you name those hosts with "
            "--hosts HOST,... (rankdebug prepares them over SSH)\n" if spread else
            f"rankdebug: this command runs on {nnodes} nodes and this machine starts node "
            f"0's part only; give the others with --hosts HOST,... (the same command is "
            f"started there over SSH, and their chosen ranks are debugged from here)\n")
    try:
        _register(job, dplan, job_proc)
    except (OSError, registry.RegistryError) as exc:
        for node in nodes:
            node.discard()
        return report(_registry_failed(job, exc), as_json=args.json, prog=PROG)
    sup = Supervisor(job_proc, job, job_dir, args.json, control=args.control, remotes=nodes,
                     spread=spread, hang_seconds=dplan.options.hang_seconds, preset=preset)
    event: dict[str, object] = {
        "event": "job", "job": job, "dir": job_dir, "pid": os.getpid(),
        "ranks": job_proc.chosen, "rank_spec": job_proc.rank_spec,
        "armed": dplan.options.arm, "attach_mode": dplan.options.attach_mode,
        "launcher": job_proc.launcher, "attach": job_proc.attach_configs(job)}
    if nodes:
        event["nodes"] = [{"node": 0, "host": socket.gethostname()},
                          *({"node": n.index, "host": n.host} for n in nodes)]
    sup.emit(event)
    return sup.run()

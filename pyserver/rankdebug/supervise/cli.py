"""``rankdebug launch``: run a training command with chosen ranks waiting for a debugger.

    rankdebug launch --ranks 1,3 --json -- torchrun --nproc_per_node 4 train.py
    rankdebug launch --ranks local0 --file train.sh --line 12

stdout (with ``--json``) carries one JSON object per line: ``{"event": "job", ...}`` first,
``{"event": "listening", "rank", "host", "port", "pid", "job"}`` per chosen rank as soon as
its port accepts connections, ``{"event": "attached", ...}`` when a client has configured
it, and ``{"event": "exited", "code": N}`` last. The job's own stdout goes to stderr then.
Errors before the job starts: exit status 2 and ``{"error": {...}}`` on stdout.

Attach modes. ``start``: a chosen rank starts debugpy before its script runs and waits for a
client there (every breakpoint works from the start, but imports and model construction run
under the tracer). ``hit`` (the default when ``--break FILE:LINE`` is given): the rank runs
untraced; the ``--break`` lines carry hit-hooks (``rankdebug.runtime.hithook``); its adapter
is up (and reported ``listening``) from the start, and the rank connects to it at the first
hit, so the client's ``attach`` completes there and the rank stops on that line. Breakpoints
not given with ``--break`` take effect from that first hit on, or after
``{"command": "attach", "rank": N}`` on stdin with ``--control``.

Armed jobs (``--arm``): every rank also serves a control socket in the job's folder
(``rankdebug.runtime.handler``) and runs without a debugger until ``rankdebug attach``,
``eval`` or ``stacks`` asks it something (or ``{"command": "attach", "rank": N}`` with
``--control``); ``--ranks`` then defaults to none.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

DEFAULT_TIMEOUT_S = 86400.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = __doc__.split("\n\n")[0] if __doc__ else None
    parser.add_argument("--ranks", default=None,
                        help="ranks to debug: all, N, A-B, localN, comma-joined (default 0; "
                        "with --arm, none)")
    parser.add_argument("--arm", action="store_true",
                        help="every rank serves a control socket so that it can be told later "
                        "to attach a debugger, evaluate an expression or report its stack "
                        "(rankdebug attach/eval/stacks); no debugger runs until then")
    parser.add_argument("--json", action="store_true", help="JSON lines on stdout")
    parser.add_argument("--no-wait", action="store_true",
                        help="chosen ranks listen but run on without waiting for a client")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--base-port", type=int, default=0,
                        help="first port to try for the chosen ranks (default: any free port)")
    parser.add_argument("--collective-timeout", type=float, default=DEFAULT_TIMEOUT_S,
                        metavar="SECONDS",
                        help="raise process-group timeouts to this (default one day; 0: off)")
    parser.add_argument("--break", dest="breaks", action="append", default=[],
                        metavar="FILE:LINE", help="a breakpoint known at start (repeatable)")
    parser.add_argument("--attach", choices=("auto", "start", "hit"), default="auto",
                        help="start: chosen ranks listen before the script runs; hit: they run "
                        "without a tracer until the first --break line (or a --control "
                        "attach; with no --break, only then), where the debugger attaches; "
                        "auto (default): hit when --break is given, else start")
    parser.add_argument("--control", action="store_true",
                        help='read JSON commands on stdin: {"command": "attach", "rank": N} '
                        '(attach now: --attach hit, or an armed rank) and {"command": "stop"}')
    parser.add_argument("--file", help="a script holding the launch command")
    parser.add_argument("--line", type=int, help="1-based line of the command in --file")
    parser.add_argument("command", nargs=argparse.REMAINDER,
                        help="-- followed by the launch command")


def _fail(args: argparse.Namespace, message: str, line: int | None = None,
          column: int | None = None) -> int:
    if args.json:
        print(json.dumps({"error": {"message": message, "line": line, "column": column}}))
    else:
        print(f"rankdebug launch: {message}", file=sys.stderr)
    return 2


def _breaks(values: list[str], cwd: Path) -> list[tuple[str, int]]:
    out = []
    for value in values:
        path, sep, line = value.rpartition(":")
        if not sep or not path or not line.isdigit() or int(line) < 1:
            raise ValueError(f"--break wants FILE:LINE, not {value!r}")
        out.append((os.path.realpath(cwd / path), int(line)))
    return out


def run(args: argparse.Namespace) -> int:
    from rankdebug.command.errors import CommandError
    from rankdebug.rewrite import RewriteError, build, prepare_boot_dir
    from rankdebug.runtime import registry
    from rankdebug.supervise import ports as portmod
    from rankdebug.supervise.job import Supervisor
    from rankdebug.supervise.plans import plan_for
    from rankdebug.ranks import RanksError, Selection, select

    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if (args.file is None) == (not command):
        return _fail(args, "give either --file FILE --line N or -- COMMAND")
    if args.file is not None and args.line is None:
        return _fail(args, "--file needs --line")
    cwd = Path.cwd()
    try:
        plan = plan_for(command or None, args.file, args.line, caller_env=os.environ, cwd=cwd)
    except CommandError as exc:
        return _fail(args, exc.message, exc.line, exc.column)
    except OSError as exc:
        return _fail(args, str(exc))
    try:
        if args.ranks is None and args.arm:
            selection = Selection("", [])  # armed only: no rank debugged from the start
        else:
            selection = select(args.ranks or "0", plan.ranks, plan.world_size)
        breaks = _breaks(args.breaks, Path(plan.cwd or cwd))
    except (RanksError, ValueError) as exc:
        return _fail(args, str(exc))
    if args.collective_timeout < 0:
        return _fail(args, "--collective-timeout must be 0 (off) or more seconds")

    job = registry.new_job_id()
    try:
        with portmod.registry_lock():
            registry.prune()  # folders of jobs whose supervisor was killed outright
            wanted = selection.ranks or []
            ports = portmod.choose(wanted, args.host, args.base_port, portmod.ports_in_registry())
            job_dir = registry.create_job(job, {"pid": os.getpid(), "state": "starting"})
            for rank, port in ports.items():
                registry.write_rank(job, {"rank": rank, "port": port, "host": args.host,
                                          "state": "starting"})
        boot, dbg = prepare_boot_dir(Path(job_dir) / "boot")
        dplan = build(
            plan,
            rank_spec=selection.spec,
            chosen=selection.ranks,
            job=job,
            boot=boot,
            debugpy_dir=dbg,
            ctl=os.path.join(job_dir, "ctl.sock"),
            host=args.host,
            ports=ports,
            base_port=args.base_port,
            wait=not args.no_wait,
            timeout=args.collective_timeout,
            breaks=breaks,
            attach=("hit" if breaks else "start") if args.attach == "auto" else args.attach,
            cwd=str(cwd),
            arm=job_dir if args.arm else None,
        )
    except RewriteError as exc:
        registry.remove_job(job)
        return _fail(args, exc.message, exc.line, exc.column)
    except (OSError, registry.RegistryError) as exc:
        registry.remove_job(job)
        return _fail(args, str(exc))

    start_time = __import__("time").time()
    info = {
        "pid": os.getpid(),
        "state": "running",
        "command": dplan.argv,
        "cwd": dplan.cwd,
        "launcher": dplan.launcher,
        "ranks": selection.ranks,
        "rank_spec": selection.spec,
        "world_size": plan.world_size,
        "start_time": start_time,
        "armed": args.arm,
    }
    registry.create_job(job, info)
    infos = {r.rank: r for r in plan.ranks}
    for rank, port in ports.items():
        known = infos.get(rank)
        registry.write_rank(job, {
            "rank": rank, "local_rank": known.local_rank if known else None,
            "world_size": plan.world_size, "host": args.host, "port": port, "pid": None,
            "state": "starting", "command": dplan.argv, "cwd": dplan.cwd,
            "start_time": start_time,
        })
    sup = Supervisor(dplan, job, job_dir, args.json, control=args.control)
    sup.emit({"event": "job", "job": job, "dir": job_dir, "pid": os.getpid(),
              "ranks": selection.ranks, "rank_spec": selection.spec, "armed": args.arm,
              "attach_mode": dplan.env.get("RANKDEBUG_ATTACH", "start"),
              "launcher": dplan.launcher, "attach": dplan.attach_configs(job)})
    return sup.run()

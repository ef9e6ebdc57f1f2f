"""``rankdebug attach``: make a running rank listen for a debugger, without restarting it.

    rankdebug attach --pid 1234 --json
    rankdebug attach JOB RANK --json
    rankdebug attach JOB 'pp=last dp=0 tp=0' --json   the one rank a selector names
    rankdebug attach JOB RANK --hosts a,b --json   a rank on host a or b (over SSH)

prints, once the port listens, the line ``rankdebug launch`` prints for its ranks:
``{"event": "listening", "rank": R, "host": "127.0.0.1", "port": N, "pid": P, "job": ID}``.
A DAP client then attaches to HOST:PORT with ``{"request": "attach"}`` (VS Code:
``"type": "rankdebug", "request": "attach", "connect": {"host": …, "port": …}``).
A rank that already listens (started by ``rankdebug launch``, or attached before) is reported
as it is; a rank of an armed job (``rankdebug launch --arm``) is told through its handler to
start its debugger; otherwise debugpy is injected (``rankdebug.jobs.attach``: our own ptrace
injector on x86-64 Linux, else gdb; ``RANKDEBUG_INJECT`` picks).
The rank runs on either way: the client sets breakpoints, or pauses it.
Errors: exit status 1 (2 for a bad request) and ``{"error": {"message": …}}`` on stdout with
``--json``.
"""

from __future__ import annotations

import argparse
import json
import sys

from rankdebug import ranks
from rankdebug.errors import BadInput, fail
from rankdebug.jobs import across, job_coords, tunnel
from rankdebug.jobs import attach as att
from rankdebug.jobs.cli_jobs import discover_all
from rankdebug.jobs.discover import Job, Rank, find_job, rank_of_pid
from rankdebug.runtime.wire import WireError, ask


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = "Make a running rank listen for a debugger (no restart)."
    parser.add_argument("job", nargs="?", help="job id, id prefix or launcher pid")
    parser.add_argument("rank", nargs="?", help="the rank of JOB to attach: its number, or a "
                                                "selector of the job's parallel coordinates "
                                                "that names one rank ('pp=last dp=0 tp=0')")
    parser.add_argument("--pid", type=int, help="the process to attach, instead of JOB RANK")
    parser.add_argument("--json", action="store_true", help="JSON on stdout")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (default: free)")
    parser.add_argument("--timeout", type=float, default=att.INJECT_TIMEOUT_S,
                        help="seconds the injection may take (default %(default)s)")
    across.add_arguments(parser)


def _fail(args: argparse.Namespace, message: str, code: int = 1) -> int:
    return fail(message, as_json=args.json, prog="rankdebug attach", code=code, pid=args.pid)


class _Refused(Exception):
    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def _target(args: argparse.Namespace) -> tuple[Job | None, Rank | None]:
    """The job and rank that ``--pid`` or ``JOB RANK`` names (sets ``args.pid``)."""
    try:
        found = discover_all(args, gpus=False)
    except BadInput as exc:
        raise _Refused(str(exc), 2) from None
    args.found = found
    if args.pid is not None:
        if args.job is not None:
            raise _Refused("give --pid or JOB RANK, not both", 2)
        hit = rank_of_pid(found.jobs, args.pid, found.host)
        # --pid is a process here: another host's rank with that number is not it.
        return hit if hit is not None and hit[1].host == found.host else (None, None)
    if args.job is None or args.rank is None:
        raise _Refused("give --pid PID, or JOB RANK", 2)
    job = find_job(found.jobs, args.job)
    if job is None:
        raise _Refused(f"no job {args.job!r} (see `rankdebug jobs`)", 2)
    number = _number(args.rank, job, found.host)
    rank = job.rank(number)
    if rank is None or rank.pid is None:
        raise _Refused(f"job {job.id} has no running rank {number}", 2)
    args.rank = number
    args.pid = rank.pid
    return job, rank


def _number(text: str, job: Job, host: str) -> int:
    """RANK as a number: as written, or the one rank a selector names."""
    if text.isascii() and text.isdigit() and len(text) < 8:
        return int(text)
    if not ranks.is_selector(text):
        raise _Refused(f"RANK must be a rank number or a selector such as tp=0 (got "
                       f"{text[:40]!r})", 2)
    try:
        spec = job_coords.resolve(text, job, host)
    except ranks.RanksError as exc:
        raise _Refused(str(exc).replace("--ranks", "RANK"), 2) from None
    picked = [n for item in ranks.items(spec) for n in ranks.numbers(item)]
    if len(picked) != 1:
        raise _Refused(f"RANK {text!r} names {ranks.label(picked)} of job {job.id}; attach "
                       "takes one (narrow it, e.g. add dp=0)", 2)
    return picked[0]


def _listen(args: argparse.Namespace, pid: int, rank: Rank | None) -> tuple[str, int]:
    """Where the rank listens: already, once its handler started it (armed), or once
    debugpy was injected."""
    if rank is not None and rank.port is not None and rank.state in ("listening", "attached"):
        return rank.address or args.host, rank.port
    if rank is not None and rank.armed and rank.socket is not None:
        try:
            reply = ask(rank.socket, {"command": "attach"}, timeout=max(args.timeout, 60.0))
        except WireError as exc:
            raise _Refused(f"rank {rank.rank}: {exc}") from None
        return str(reply.get("host")), int(reply.get("port") or 0)
    try:
        done = att.attach(pid, args.host, args.port, args.timeout)
    except att.AttachError as exc:
        raise _Refused(str(exc)) from None
    if not args.json:
        print(f"rankdebug: debugpy injected into {pid} in {done.seconds:.1f} s",
              file=sys.stderr)
    return done.host, done.port


def _elsewhere(args: argparse.Namespace, job: Job, rank: Rank) -> tuple[str, int] | None:
    """A rank on another host (``--hosts``): attached there by that host's ``rankdebug
    attach``, and reached through a tunnel from here (``jobs.tunnel``); None for a rank
    of this machine."""
    remote = across.remote_of(args)
    part = next((p for p in across.parts(args.found, job) if p[1] == rank.host), None)
    if remote is None or part is None:
        return None
    ssh_host, _name, there = part
    verb = ["attach", there, str(rank.rank), "--json", "--timeout", str(args.timeout)]
    try:
        got = across.run_verb(remote, ssh_host, verb, timeout=args.timeout + 60)
        answer = json.loads(got.stdout.strip().splitlines()[-1])
    except (across.RemoteVerbError, ValueError, IndexError) as exc:
        raise _Refused(f"rank {rank.rank} on {rank.host}: {exc}") from None
    if "port" not in answer:
        message = (answer.get("error") or {}).get("message") or "no port"
        raise _Refused(f"rank {rank.rank} on {rank.host}: {message}")
    try:
        return "127.0.0.1", tunnel.start(remote.ssh(ssh_host), int(answer["port"]))
    except OSError as exc:
        raise _Refused(f"rank {rank.rank} on {rank.host}: cannot reach its debugger "
                       f"through ssh {ssh_host}: {exc}") from None


def _here_or_refuse(args: argparse.Namespace, rank: Rank | None) -> None:
    """A rank of another host is reached through its gate here (a chosen rank of a
    ``launch --hosts`` job) or with ``--hosts``; never by its pid or handler here (the pid
    is that host's, and its debugger would listen on that host's loopback)."""
    found = getattr(args, "found", None)
    if rank is None or found is None or rank.host in (None, found.host):
        return
    if rank.port is not None and rank.state in ("listening", "attached"):
        return
    raise _Refused(across.unreached(rank.rank, rank.host), 2)


def run(args: argparse.Namespace) -> int:
    node = None
    try:
        job, rank = _target(args)
        pid: int = args.pid
        far = _elsewhere(args, job, rank) if job is not None and rank is not None else None
        if far is not None:
            node = rank.host if rank is not None else None
            host, port = far
        else:
            _here_or_refuse(args, rank)
            host, port = _listen(args, pid, rank)
    except _Refused as exc:
        return _fail(args, str(exc), exc.code)
    event = {"event": "listening", "rank": rank.rank if rank else None, "host": host,
             "port": port, "pid": pid, "job": job.id if job else None}
    if node is not None:
        event["node"] = node
    if args.json:
        print(json.dumps(event), flush=True)
    else:
        who = f"rank {event['rank']} (pid {pid})" if rank else f"pid {pid}"
        print(f"{who} listens on {host}:{port}: attach a debugger there "
              '(DAP "attach" request)')
    return 0

"""``rankdebug attach``: make a running rank listen for a debugger, without restarting it.

    rankdebug attach --pid 1234 --json
    rankdebug attach JOB RANK --json
    rankdebug attach JOB 'pp=last dp=0 tp=0' --json   the one rank a selector names
    rankdebug attach JOB 0-15 --json   many ranks at once (also all, tp=0, 0,3,5)
    rankdebug attach JOB RANK --hosts a,b --json   a rank on host a or b (over SSH)

prints, once the port listens, the line ``rankdebug launch`` prints for its ranks:
``{"event": "listening", "rank": R, "host": "127.0.0.1", "port": N, "pid": P, "job": ID}``
(with ``"via": "remote_exec" | "ptrace" | "gdb"`` when debugpy was put in just now).
A DAP client then attaches to HOST:PORT with ``{"request": "attach"}`` (VS Code:
``"type": "rankdebug", "request": "attach", "connect": {"host": …, "port": …}``).
Many ranks are attached side by side (``--parallel`` at a time, default twice the CPUs), one
line each as it listens; a rank that fails gives ``{"event": "failed", "rank", "pid", "job",
"message"}`` and the others are attached all the same; last comes ``{"event": "done", "job",
"attached": [...], "failed": [...], "seconds": S}`` (exit status 1 when any failed).
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
import time

from rankdebug import ranks
from rankdebug.errors import BadInput, fail
from rankdebug.jobs import attach as att
from rankdebug.jobs import attach_many, job_coords
from rankdebug.jobs.cli_jobs import discover_all
from rankdebug.jobs.discover import Job, Rank, find_job, rank_of_pid
from rankdebug.jobs.nodes import across, tunnel


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = "Make a running rank listen for a debugger (no restart)."
    parser.add_argument("job", nargs="?", help="job id, id prefix or launcher pid")
    parser.add_argument("rank", nargs="?", help="the ranks of JOB to attach: a number, several "
                                                "(0-15, 0,3, all), or a selector of the job's "
                                                "parallel coordinates ('pp=last dp=0 tp=0', "
                                                "'tp=0')")
    parser.add_argument("--pid", type=int, help="the process to attach, instead of JOB RANK")
    parser.add_argument("--json", action="store_true", help="JSON on stdout")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (default: free)")
    parser.add_argument("--timeout", type=float, default=att.INJECT_TIMEOUT_S,
                        help="seconds the injection may take (default %(default)s)")
    parser.add_argument("--parallel", type=int, default=None, metavar="N",
                        help="ranks attached at once when RANK names several (default: twice "
                             "the CPUs; 1: one after another)")
    across.add_arguments(parser)


def _fail(args: argparse.Namespace, message: str, code: int = 1) -> int:
    return fail(message, as_json=args.json, prog="rankdebug attach", code=code, pid=args.pid)


class _Refused(Exception):
    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def _target(args: argparse.Namespace) -> tuple[Job | None, list[Rank]]:
    """The job and ranks that ``--pid`` or ``JOB RANK`` names (one rank: sets ``args.pid``
    and ``args.rank`` to its number); no rank for a ``--pid`` of no job."""
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
        return (hit[0], [hit[1]]) if hit is not None and hit[1].host == found.host else (None, [])
    if args.job is None or args.rank is None:
        raise _Refused("give --pid PID, or JOB RANK", 2)
    job = find_job(found.jobs, args.job)
    if job is None:
        raise _Refused(f"no job {args.job!r} (see `rankdebug jobs`)", 2)
    picked = _picked(args.rank, job, found.host)
    if len(picked) > 1:
        if args.port:
            raise _Refused(f"--port takes one rank; RANK {args.rank!r} names "
                           f"{len(picked)} ranks", 2)
        return job, picked
    rank = picked[0]
    if rank.pid is None:
        raise _Refused(f"job {job.id} has no running rank {rank.rank}", 2)
    args.rank = rank.rank
    args.pid = rank.pid
    return job, [rank]


def _picked(text: str, job: Job, host: str) -> list[Rank]:
    """The ranks of ``job`` RANK names: a number, several, or a selector's."""
    if text.isascii() and text.isdigit() and len(text) < 8:
        rank = job.rank(int(text))
        if rank is None:
            raise _Refused(f"job {job.id} has no running rank {text}", 2)
        return [rank]
    try:
        picked = job_coords.pick(text, job, host)
        named = [] if ranks.is_selector(text) or not job.world_size else [
            n for lo, hi in _spans(text, job.world_size) for n in range(lo, hi + 1)]
    except ranks.RanksError as exc:
        raise _Refused(str(exc).replace("--ranks", "RANK"), 2) from None
    # A rank of the job named by number but not running (ended, not started yet): its own
    # failed line, not silence.
    have = {r.rank for r in picked}
    picked += [Rank(pid=None, rank=n, local_rank=None, world_size=job.world_size, host=host)
               for n in sorted(set(named) - have)]
    return sorted(picked, key=lambda r: r.rank or 0)


def _spans(text: str, world: int) -> list[tuple[int, int]]:
    """The ranges of rank numbers ``text`` names, cut to the job's ``world`` size."""
    out = []
    for item in ranks.items(text):
        if item[0].isdigit():
            first, _, last = item.partition("-")
            lo, hi = int(first), min(int(last or first), world - 1)
            if lo <= hi:
                out.append((lo, hi))
    return out


Where = tuple[str, int, str | None]  # host, port, how debugpy got in (None: it was there)


def _listen(args: argparse.Namespace, pid: int, rank: Rank | None) -> Where:
    """Where the rank listens: already, once its handler started it (armed), or once
    debugpy was injected."""
    if rank is not None and rank.port is not None and rank.state in ("listening", "attached"):
        return rank.address or args.host, rank.port, None
    if rank is not None and rank.armed and rank.socket is not None:
        try:
            host, port = att.armed_listen(rank.socket, max(args.timeout, 60.0))
        except att.AttachError as exc:
            raise _Refused(f"rank {rank.rank}: {exc}") from None
        return host, port, None
    try:
        done = att.attach(pid, args.host, args.port, args.timeout)
    except att.AttachError as exc:
        raise _Refused(str(exc)) from None
    if not args.json:
        print(f"rankdebug: debugpy injected into {pid} in {done.seconds:.1f} s "
              f"({done.via})", file=sys.stderr)
    return done.host, done.port, done.via


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


def _one(args: argparse.Namespace, job: Job | None, rank: Rank | None, pid: int
         ) -> dict[str, object]:
    """Make one rank (or ``--pid``'s process) listen; its ``listening`` event."""
    node = None
    far = _elsewhere(args, job, rank) if job is not None and rank is not None else None
    if far is not None:
        node = rank.host if rank is not None else None
        host, port, via = *far, None
    else:
        _here_or_refuse(args, rank)
        host, port, via = _listen(args, pid, rank)
    event: dict[str, object] = {"event": "listening", "rank": rank.rank if rank else None,
                                "host": host, "port": port, "pid": pid,
                                "job": job.id if job else None}
    if node is not None:
        event["node"] = node
    if via is not None:
        event["via"] = via
    return event


def _said(args: argparse.Namespace, event: dict[str, object]) -> None:
    if args.json:
        print(json.dumps(event), flush=True)
    elif event["event"] == "listening":
        rank, pid = event["rank"], event["pid"]
        who = f"rank {rank} (pid {pid})" if rank is not None else f"pid {pid}"
        print(f"{who} listens on {event['host']}:{event['port']}: attach a debugger there "
              '(DAP "attach" request)', flush=True)
    elif event["event"] == "failed":
        print(f"rankdebug attach: rank {event['rank']}: {event['message']}", file=sys.stderr,
              flush=True)


def _many(args: argparse.Namespace, job: Job, picked: list[Rank]) -> int:
    """Attach every rank of ``picked`` side by side; a line for each as it ends."""
    t0 = time.monotonic()

    def one(rank: Rank) -> dict[str, object]:
        if rank.pid is None:
            raise _Refused(f"job {job.id} has no running rank {rank.rank}")
        return _one(args, job, rank, rank.pid)

    def told(done: attach_many.Outcome[Rank, dict[str, object]]) -> None:
        if done.result is not None:
            _said(args, done.result)
        else:
            _said(args, {"event": "failed", "rank": done.item.rank, "pid": done.item.pid,
                         "job": job.id, "message": _message(done.error)})

    outcomes = attach_many.run_all(picked, one, args.parallel, on_done=told)
    attached = [o.item.rank for o in outcomes if o.result is not None]
    failed = [o.item.rank for o in outcomes if o.result is None]
    summary = {"event": "done", "job": job.id, "attached": attached, "failed": failed,
               "seconds": round(time.monotonic() - t0, 3)}
    if args.json:
        print(json.dumps(summary), flush=True)
    else:
        print(f"{len(attached)} of {len(picked)} ranks of {job.id} listen "
              f"({summary['seconds']} s)", file=sys.stderr)
    return 1 if failed else 0


def _message(error: Exception | None) -> str:
    """What a rank's failure says: ours as written, anything else with its kind (a bug
    of ours, said on the rank's line rather than as a traceback that ends the others)."""
    if isinstance(error, _Refused):
        return str(error)
    return f"{type(error).__name__}: {error}"


def run(args: argparse.Namespace) -> int:
    if args.parallel is not None and args.parallel < 1:
        return _fail(args, f"--parallel must be 1 or more (got {args.parallel})", 2)
    try:
        job, picked = _target(args)
        if len(picked) > 1 and job is not None:
            return _many(args, job, picked)
        event = _one(args, job, picked[0] if picked else None, args.pid)
    except _Refused as exc:
        return _fail(args, str(exc), exc.code)
    _said(args, event)
    return 0

"""``rankdebug stacks``: every thread of every rank at one moment, ranks with the same stack
collapsed into one row, the odd ones marked.

    rankdebug stacks JOB            plain text
    rankdebug stacks JOB --json     the JSON of ``rankdebug.jobs.stacks.report``
    rankdebug stacks --pid 123 --pid 124

Exit status: 0 when every rank was read, 1 when some could not be, 2 for a bad request.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from rankdebug.jobs import stacks as stk
from rankdebug.jobs.discover import discover, find_job, rank_of_pid


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Every rank's Python stack, side by side (from armed ranks' "
                          "handlers, else through py-spy).")
    parser.add_argument("job", nargs="?", help="job id, id prefix or launcher pid")
    parser.add_argument("--pid", type=int, action="append", default=[],
                        help="a process to read (repeatable), instead of a job")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    parser.add_argument("--nonblocking", action="store_true",
                        help="do not pause the ranks while reading (stacks may be torn)")
    parser.add_argument("--verbose", "-v", action="store_true",
                        help="frames of every thread, not only the main threads'")
    parser.add_argument("--timeout", type=float, default=stk.DUMP_TIMEOUT_S,
                        help="seconds to wait for one rank (default %(default)s)")


def _fail(args: argparse.Namespace, message: str, code: int = 2) -> int:
    if args.json:
        print(json.dumps({"error": {"message": message}}))
    else:
        print(f"rankdebug stacks: {message}", file=sys.stderr)
    return code


def run(args: argparse.Namespace) -> int:
    if bool(args.job) == bool(args.pid):
        return _fail(args, "give a JOB or one or more --pid")
    found = discover(gpus=False)
    job_id: str | None = None
    if args.job:
        job = find_job(found.jobs, args.job)
        if job is None:
            return _fail(args, f"no job {args.job!r} (see `rankdebug jobs`)")
        job_id = job.id
        targets: list[tuple[int, int | None, str | None]] = [
            (r.pid, r.rank, r.host) for r in job.ranks if r.pid is not None]
        sockets = {r.pid: r.socket for r in job.ranks
                   if r.pid is not None and r.armed and r.socket is not None}
        if not targets:
            return _fail(args, f"job {job.id} has no running rank yet", 1)
    else:
        targets = []
        sockets = {}
        for pid in args.pid:
            hit = rank_of_pid(found.jobs, pid)
            targets.append((pid, hit[1].rank if hit else None, found.host))
            if hit and hit[1].armed and hit[1].socket is not None:
                sockets[pid] = hit[1].socket
            if hit and job_id is None:
                job_id = hit[0].id
    t0 = time.monotonic()
    try:
        taken = stk.take(targets, nonblocking=args.nonblocking, timeout=args.timeout,
                         sockets=sockets)
    except stk.StacksError as exc:
        return _fail(args, str(exc))
    seconds = time.monotonic() - t0
    groups = stk.group(taken)
    if args.json:
        print(json.dumps(stk.report(taken, groups, job_id, seconds)))
    else:
        sys.stdout.write(stk.render(taken, groups, job_id, seconds, verbose=args.verbose))
    return 1 if any(rs.error for rs in taken) else 0

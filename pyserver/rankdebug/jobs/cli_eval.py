"""``rankdebug eval JOB RANK EXPR``: evaluate an expression in a live rank, no debugger.

    rankdebug eval 20261122-152550 1 "optimizer.param_groups[0]['lr']"
    rankdebug eval JOB 0 "torch.cuda.memory_allocated()" --json --timeout 5

Works on jobs started with ``rankdebug launch --arm``: the rank's handler evaluates the
expression in a thread of its own, with the names of the user's frames on the main thread's
stack (innermost first) and of ``__main__``, while the rank runs on. Prints the value's repr
(``--json``: ``{"event": "result", "job", "rank", "pid", "expr", "text", "type"}``).
Errors: exit status 1 (the expression failed, or no answer within ``--timeout``), 2 (a bad
request: no such job or rank, or a job that is not armed), with ``{"error": {"message"}}``
on stdout under ``--json``.
"""

from __future__ import annotations

import argparse
import json
import sys

from rankdebug.jobs.discover import discover, find_job
from rankdebug.runtime.wire import WireError, ask


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = "Evaluate an expression in a live rank of an armed job."
    parser.add_argument("job", help="job id, id prefix or launcher pid")
    parser.add_argument("rank", type=int, help="the rank to ask")
    parser.add_argument("expr", help="a Python expression, e.g. 'optimizer.param_groups[0]'")
    parser.add_argument("--json", action="store_true", help="JSON on stdout")
    parser.add_argument("--timeout", type=float, default=10.0,
                        help="seconds to wait for the value (default %(default)s)")


def _fail(args: argparse.Namespace, message: str, code: int) -> int:
    if args.json:
        print(json.dumps({"error": {"message": message}}))
    else:
        print(f"rankdebug eval: {message}", file=sys.stderr)
    return code


def run(args: argparse.Namespace) -> int:
    if args.timeout <= 0:
        return _fail(args, "--timeout must be more than 0 seconds", 2)
    found = discover(gpus=False)
    job = find_job(found.jobs, args.job)
    if job is None:
        return _fail(args, f"no job {args.job!r} (see `rankdebug jobs`)", 2)
    rank = job.rank(args.rank)
    if rank is None:
        return _fail(args, f"job {job.id} has no rank {args.rank}", 2)
    if not rank.armed or rank.socket is None:
        return _fail(
            args,
            f"rank {args.rank} of job {job.id} has no handler: eval works on jobs started "
            "with `rankdebug launch --arm`; attach a debugger instead "
            f"(`rankdebug attach {job.id} {args.rank}`) and evaluate there",
            2,
        )
    try:
        # The rank's own timeout answers first; ours covers a rank that cannot answer at all.
        reply = ask(rank.socket, {"command": "eval", "expr": args.expr,
                                  "timeout": args.timeout}, timeout=args.timeout + 5.0)
    except WireError as exc:
        return _fail(args, f"rank {args.rank}: {exc}", 1)
    text = str(reply.get("text", ""))
    if args.json:
        print(json.dumps({"event": "result", "job": job.id, "rank": args.rank,
                          "pid": reply.get("pid"), "expr": args.expr, "text": text,
                          "type": reply.get("type")}))
    else:
        print(text)
    return 0

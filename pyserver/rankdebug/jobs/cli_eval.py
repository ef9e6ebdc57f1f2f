"""``rankdebug eval JOB RANK EXPR``: evaluate an expression in a live rank, no debugger.

It is meant to go through a handler in armed ranks, which does not exist yet; until then
it checks the job and rank and says to attach a debugger instead.
"""

from __future__ import annotations

import argparse
import json
import sys

from rankdebug.jobs.discover import discover, find_job


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = "Evaluate an expression in a live rank of an armed job."
    parser.add_argument("job", help="job id, id prefix or launcher pid")
    parser.add_argument("rank", type=int, help="the rank to ask")
    parser.add_argument("expr", help="a Python expression, e.g. 'optimizer.param_groups[0]'")
    parser.add_argument("--json", action="store_true", help="JSON on stdout")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds to wait")


def _fail(args: argparse.Namespace, message: str, code: int) -> int:
    if args.json:
        print(json.dumps({"error": {"message": message}}))
    else:
        print(f"rankdebug eval: {message}", file=sys.stderr)
    return code


def run(args: argparse.Namespace) -> int:
    found = discover(gpus=False)
    job = find_job(found.jobs, args.job)
    if job is None:
        return _fail(args, f"no job {args.job!r} (see `rankdebug jobs`)", 2)
    if job.rank(args.rank) is None:
        return _fail(args, f"job {job.id} has no rank {args.rank}", 2)
    return _fail(
        args,
        "eval needs an in-rank handler that this version of rankdebug does not have yet; "
        f"attach a debugger instead (`rankdebug attach {job.id} {args.rank}`) and evaluate "
        "there",
        2,
    )

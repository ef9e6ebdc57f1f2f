"""``rankdebug jobs``: the training jobs running on this machine and their ranks.

    rankdebug jobs              a table
    rankdebug jobs --json       one JSON object (the shape is in ``rankdebug.jobs``)
    rankdebug jobs JOB --json   one job
    rankdebug jobs --sample 1   CPU measured over one second (a hung rank shows ~0 %)
    rankdebug jobs --hosts a,b  also the ranks on hosts a and b (over SSH), one job per
                                rendezvous
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from typing import Any

from rankdebug.errors import BadInput, fail, report
from rankdebug.jobs import job_coords
from rankdebug.jobs.discover import (
    Discovery,
    Job,
    collective_text,
    discover,
    find_job,
    raised_text,
)
from rankdebug.jobs.nodes import across


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = "List running training jobs and their ranks."
    parser.add_argument("job", nargs="?", help="only this job (id, id prefix or launcher pid)")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    parser.add_argument("--no-gpu", action="store_true", help="do not ask nvidia-smi")
    parser.add_argument("--sample", type=float, default=0.0, metavar="SECONDS",
                        help="measure CPU over this many seconds (default: average since "
                        "each rank started)")
    across.add_arguments(parser)


def _mib(n: int | None) -> str:
    return "-" if n is None else f"{n / (1 << 20):.0f}M"


def _when(t: float | None) -> str:
    return "-" if t is None else time.strftime("%H:%M:%S", time.localtime(t))


def render(found: Discovery) -> str:
    lines = [] if found.jobs else [f"no training jobs on {found.host} "
                                   f"(scan: {found.scan_ms:.0f} ms)"]
    for job in found.jobs:
        cmd = shlex.join(job.command)
        if len(cmd) > 100:
            cmd = cmd[:99] + "…"
        armed = " armed" if job.armed else ""
        lines.append(f"{job.id}  [{job.source}{armed}] {job.launcher or '?'}  "
                     f"world {job.world_size if job.world_size is not None else '?'}  "
                     f"started {_when(job.start_time)}  {cmd}")
        for r in job.ranks:
            rank = "?" if r.rank is None else str(r.rank)
            local = "?" if r.local_rank is None else str(r.local_rank)
            port = f"  port {r.port}" if r.port is not None else ""
            port += "  armed" if r.armed else ""
            gpu = ""
            if r.gpu:
                gpu = "  gpu " + ",".join(str(g.get("index")) for g in r.gpu)
            cpu = "-" if r.cpu is None else f"{r.cpu:.0f}%"
            raised = f"  {raised_text(r.raised)}" if r.raised else ""
            if r.collective:
                raised += f"  waiting in {collective_text(r.collective)}"
            where = f"  {job_coords.text(r.coords)}" if r.coords else ""
            lines.append(f"    rank {rank:>3}  local {local:>2}  pid {r.pid or '-':>7}  "
                         f"{r.state:<9} {r.proc_state or '-':<9} cpu {cpu:>5}  "
                         f"rss {_mib(r.rss):>6}{gpu}{where}{port}{raised}")
    for w in found.warnings:
        lines.append(f"warning: {w}")
    return "\n".join(lines) + "\n"


def discover_all(args: argparse.Namespace, coords: bool = False, **kw: Any) -> Discovery:
    """This machine's jobs, and with ``--hosts`` the other hosts' merged in (see
    ``jobs.across``); raises BadInput for a bad --hosts. ``coords``: ask this machine's
    ranks for the parallel coordinates they have not recorded (``jobs.job_coords``; the
    other hosts' ``jobs`` asks theirs)."""
    remote = across.remote_of(args)
    found = discover(**kw)
    if coords:
        job_coords.fill(found.jobs, found.host)
    if remote is None:
        return found
    verb = ["jobs", "--json", *(["--no-gpu"] if getattr(args, "no_gpu", False) else [])]
    return across.merge_jobs(found, across.on_hosts(remote, lambda _host: verb))


def run(args: argparse.Namespace) -> int:
    first = None
    try:
        across.remote_of(args)
    except BadInput as exc:
        return report(exc, as_json=args.json, prog="rankdebug jobs")
    if args.sample > 0:
        first = discover(gpus=False)
        time.sleep(args.sample)
    found = discover_all(args, gpus=not args.no_gpu, previous=first)
    if args.job:
        job: Job | None = find_job(found.jobs, args.job)
        if job is None:
            # A job that does not exist is bad input, as in stacks and eval.
            return fail(f"no job {args.job!r}", as_json=args.json, prog="rankdebug jobs")
        found.jobs = [job]
    if args.json:
        print(json.dumps(found.to_json()))
    else:
        sys.stdout.write(render(found))
    return 0

"""``rankdebug stacks``: every thread of every rank at one moment, ranks with the same stack
collapsed into one row, the odd ones marked.

    rankdebug stacks JOB            plain text
    rankdebug stacks JOB --json     the JSON of ``rankdebug.jobs.analysis.stacks.report``
    rankdebug stacks --pid 123 --pid 124
    rankdebug stacks JOB --ranks 'tp=0'   only some ranks: numbers, or parallel coordinates
    rankdebug stacks JOB --hosts a,b   also the job's ranks on hosts a and b (over SSH)

Exit status: 0 when every rank was read, 1 when some could not be, 2 for a bad request.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from rankdebug.errors import BadInput, fail
from rankdebug.jobs import job_coords
from rankdebug.jobs.analysis import stacks as stk
from rankdebug.jobs.analysis.odd_ones import odd_ranks, settled
from rankdebug.jobs.cli_jobs import discover_all
from rankdebug.jobs.discover import discover, find_job, rank_of_pid
from rankdebug.jobs.nodes import across, fanin


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Every rank's Python stack, side by side (from armed ranks' "
                          "handlers, else through py-spy).")
    parser.add_argument("job", nargs="?", help="job id, id prefix or launcher pid")
    parser.add_argument("--pid", type=int, action="append", default=[],
                        help="a process to read (repeatable), instead of a job")
    parser.add_argument("--ranks", default=None, metavar="RANKS",
                        help="only these ranks of JOB: 0-3, 1,3, local0, or by the job's "
                             "parallel coordinates: tp=0, 'pp=1 tp=0-3', pp=last")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    parser.add_argument("--nonblocking", action="store_true",
                        help="do not pause the ranks while reading (stacks may be torn)")
    parser.add_argument("--verbose", "-v", action="store_true",
                        help="frames of every thread, not only the main threads'")
    parser.add_argument("--timeout", type=float, default=stk.DUMP_TIMEOUT_S,
                        help="seconds to wait for one rank (default %(default)s)")
    parser.add_argument("--samples", type=int, default=3,
                        help="reads of every rank, --interval apart; a rank is the odd one "
                             "out only if it stays apart in all (default %(default)s; fewer "
                             "when the first already shows no rank apart)")
    parser.add_argument("--interval", type=float, default=0.25,
                        help="seconds from the start of one read to the next's (default "
                             "%(default)s)")
    parser.add_argument("--tree", action="store_true",
                        help="the main threads merged into one tree, ranks at each frame")
    across.add_arguments(parser)
    # Asked of another host by --hosts: its ranks as classes and rows (``jobs.fanin``).
    parser.add_argument("--node-answer", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--rendezvous", default=None, help=argparse.SUPPRESS)


def _fail(args: argparse.Namespace, message: str, code: int = 2) -> int:
    return fail(message, as_json=args.json, prog="rankdebug stacks", code=code)


Targets = list[tuple[int, int | None, str | None]]


Parts = list[tuple[str, str, str]]  # (ssh host, its name, the job's id there)


def _targets(args: argparse.Namespace
             ) -> tuple[str | None, Targets, dict[int, str], Parts]:
    """The job's id, the (pid, rank, host) to read here, the ranks' handler sockets by pid,
    and the job's parts on other hosts (``--hosts``); raises ValueError (a bad request) or
    LookupError (a job with no rank running yet)."""
    if args.rendezvous is not None:  # asked by another host: its part of that job, or none
        return _part(args)
    remote = across.remote_of(args)
    found = discover(gpus=False)
    args.here = found.host
    quick = (across.one_round(remote, found, args.job)
             if args.job and args.ranks is None else None)
    if quick is not None:  # each host finds its own part: asked once, not twice
        args.rendezvous_there = across.rendezvous_of(quick[0])
    elif remote is not None:
        found = discover_all(args, gpus=False)
    if args.job:
        job = find_job(found.jobs, args.job) if quick is None else quick[0]
        if job is None:
            raise ValueError(f"no job {args.job!r} (see `rankdebug jobs`)")
        parts = across.parts(found, job) if quick is None else quick[1]
        if args.ranks is not None:
            keep = job_coords.pick(args.ranks, job, found.host)  # raises RanksError
            job.ranks = [r for r in job.ranks if r in keep]
            # Another host reads the same ranks, by number: only a host that has some.
            args.ranks_there = ",".join(str(r.rank) for r in keep)
            parts = [p for p in parts if any(r.host == p[1] for r in keep)]
        elsewhere = {name for _, name, _ in parts}
        if quick is not None:  # the other hosts' names are in their answers
            elsewhere = {r.host for r in job.ranks if r.host != found.host}
            args.known_there = [r for r in job.ranks if r.host in elsewhere]
        # A rank of another host that no --hosts reaches: its pid is that host's, never
        # one to read here.
        args.away = [r for r in job.ranks if r.host != found.host and r.host not in elsewhere]
        mine = [r for r in job.ranks if r.host not in elsewhere and r not in args.away]
        targets: Targets = [(r.pid, r.rank, r.host) for r in mine if r.pid is not None]
        if not targets and not parts and not args.away:
            raise LookupError(f"job {job.id} has no running rank yet")
        sockets = {r.pid: r.socket for r in mine  # armed, chosen or held ranks
                   if r.pid is not None and r.socket is not None}
        return job.id, targets, sockets, parts
    job_id: str | None = None
    targets, sockets = [], {}
    for pid in args.pid:
        hit = rank_of_pid(found.jobs, pid, found.host)
        if hit and hit[1].host != found.host:  # --pid is a process here
            hit = None
        targets.append((pid, hit[1].rank if hit else None, found.host))
        if hit and hit[1].socket is not None:
            sockets[pid] = hit[1].socket
        if hit and job_id is None:
            job_id = hit[0].id
    return job_id, targets, sockets, []


def _part(args: argparse.Namespace) -> tuple[str | None, Targets, dict[int, str], Parts]:
    """``--rendezvous``: this host's ranks of the job with that rendezvous (none: nothing
    to read here, not an error)."""
    found = discover(gpus=False)
    args.here = found.host
    job = across.by_rendezvous(found.jobs, args.rendezvous)
    if job is None:
        return None, [], {}, []
    mine = [r for r in job.ranks if r.host == found.host and r.pid is not None]
    return (job.id, [(r.pid, r.rank, r.host) for r in mine if r.pid is not None],
            {r.pid: r.socket for r in mine if r.pid is not None and r.socket is not None}, [])


def run(args: argparse.Namespace) -> int:
    if bool(args.job) == bool(args.pid):
        return _fail(args, "give a JOB or one or more --pid")
    if args.ranks is not None and not args.job:
        return _fail(args, "--ranks picks ranks of a JOB; give the JOB")
    if args.samples < 1 or args.interval < 0:
        return _fail(args, "--samples must be 1 or more and --interval 0 or more")
    try:
        job_id, targets, sockets, parts = _targets(args)
    except (ValueError, BadInput) as exc:
        return _fail(args, str(exc))
    except LookupError as exc:
        return _fail(args, str(exc), 1)
    t0 = time.monotonic()
    elsewhere: list[stk.RankStack] = [
        stk.RankStack(pid=r.pid or 0, rank=r.rank, host=r.host,
                      error=across.unreached(r.rank, r.host))
        for r in getattr(args, "away", [])]
    remote = across.remote_of(args)
    reader = None
    if parts and remote is not None:  # the other hosts read theirs meanwhile
        verb = ["--samples", str(args.samples), "--interval", str(args.interval),
                "--timeout", str(args.timeout), *(["--nonblocking"] if args.nonblocking
                                                  else []),
                *(["--ranks", args.ranks_there] if args.ranks is not None else []),
                *(["--rendezvous", args.rendezvous_there]
                  if getattr(args, "rendezvous_there", None) else [])]
        reader = ThreadPoolExecutor(max_workers=1).submit(
            across.remote_stacks, remote, parts, verb, args.timeout * args.samples + 60,
            args.here)
    try:
        reads = _reads(args, targets, sockets) if targets else [[]]
    except stk.StacksError as exc:
        return _fail(args, str(exc))
    if reader is not None:
        got = reader.result()
        answered = {rs.host for rs in got}
        elsewhere += got + [  # known to be on a host that no --hosts reached
            stk.RankStack(pid=r.pid or 0, rank=r.rank, host=r.host,
                          error=across.unreached(r.rank, r.host))
            for r in getattr(args, "known_there", []) if r.host not in answered]
    if elsewhere:
        reads = [[*one, *elsewhere] for one in reads]
    seconds = time.monotonic() - t0
    taken = reads[-1]
    groups = stk.group(taken, odd=odd_ranks([stk.main_keys(one) for one in reads]))
    # A disagreement on collectives counts when every read shows it.
    found = [stk.mismatches(one) for one in reads]
    steady = [m for m in found[-1]
              if all(m["message"] in {o["message"] for o in one} for one in found)]
    view = stk.View(samples=len(reads), collectives=steady, tree=args.tree,
                    verbose=args.verbose)
    if args.node_answer:
        print(json.dumps(fanin.stacks_answer(taken, job_id, getattr(args, "here", None),
                                             seconds)))
    elif args.json:
        print(json.dumps(stk.report(taken, groups, job_id, seconds, view)))
    else:
        sys.stdout.write(stk.render(taken, groups, job_id, seconds, view))
    return 1 if any(rs.error for rs in taken) else 0


def _reads(args: argparse.Namespace, targets: list[tuple[int, int | None, str | None]],
           sockets: dict[int, str]) -> list[list[stk.RankStack]]:
    """Up to ``--samples`` reads, each starting ``--interval`` after the one before started;
    fewer when more could change nothing (``_settled``)."""
    reads: list[list[stk.RankStack]] = []
    start = time.monotonic()
    for i in range(args.samples):
        if i:
            time.sleep(max(0.0, start + i * args.interval - time.monotonic()))
        reads.append(stk.take(targets, nonblocking=args.nonblocking, timeout=args.timeout,
                              sockets=sockets))
        if _settled(reads):
            break
    return reads


def _settled(reads: list[list[stk.RankStack]]) -> bool:
    """Whether more reads can flag no rank and report no disagreement on collectives: no
    rank was apart from the others in every read so far, and no disagreement was in every
    read (one healthy read of a job whose ranks all wait in the same place is the answer)."""
    if not settled([stk.main_keys(one) for one in reads]):
        return False
    found = [{m["message"] for m in stk.mismatches(one)} for one in reads]
    return not set.intersection(*found)

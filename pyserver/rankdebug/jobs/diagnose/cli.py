"""``rankdebug diagnose JOB``: why a job is stuck, in one step.

    rankdebug diagnose JOB              a short report
    rankdebug diagnose JOB --json       one JSON object a line (see ``rankdebug.jobs.diagnose``)
    rankdebug diagnose JOB --hosts a,b  also the job's ranks on hosts a and b (over SSH)
    rankdebug diagnose JOB --ranks tp=0 only some ranks: numbers, or parallel coordinates

Nothing in the job is changed: armed ranks answer through their handlers, the others are read
by py-spy. Exit status 0 when the job could be read (whatever it shows), 1 when none of its
ranks could (the lines say why, rank by rank), 2 with the error envelope for a job that does
not exist, a bad option, a host that cannot be reached, or no py-spy where a rank needs it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from rankdebug.errors import FAILED, BadInput, report
from rankdebug.jobs import job_coords
from rankdebug.jobs.analysis import stacks as stk
from rankdebug.jobs.cli_jobs import discover_all
from rankdebug.jobs.diagnose import busy_progress, native_wait
from rankdebug.jobs.diagnose import findings as fnd
from rankdebug.jobs.diagnose import report as out
from rankdebug.jobs.diagnose.classes import classes
from rankdebug.jobs.diagnose.expected import gone_here
from rankdebug.jobs.diagnose.seen import Seen, judge, place, position
from rankdebug.jobs.diagnose.seen import _marks as marks
from rankdebug.jobs.diagnose.watch import Target, Watch, watch
from rankdebug.jobs.discover import Job, Rank, discover, find_job
from rankdebug.jobs.nodes import across
from rankdebug.runtime import procstat

PROG = "rankdebug diagnose"
MAX_WORLD = 1 << 16  # a world size beyond this is not believed (no list of that many)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Why a job is stuck: every rank read a few times, the ranks classed "
                          "by where they are, and what holds the job named.")
    parser.add_argument("job", help="job id, id prefix or launcher pid (see `rankdebug jobs`)")
    parser.add_argument("--json", action="store_true", help="one JSON object a line")
    parser.add_argument("--samples", type=int, default=3,
                        help="reads of every rank, at least 2 (default %(default)s; fewer "
                             "when every rank has already moved and none was in a "
                             "collective)")
    parser.add_argument("--watch", type=float, default=2.0, metavar="SECONDS",
                        help="while ranks wait in a collective, read on for this long before "
                             "naming the rank they wait for: a slow one comes meanwhile "
                             "(default %(default)s)")
    parser.add_argument("--interval", type=float, default=0.3,
                        help="seconds between the end of one read and the start of the next "
                             "(default %(default)s)")
    parser.add_argument("--timeout", type=float, default=10.0,
                        help="seconds to wait for one read of the ranks (default %(default)s)")
    parser.add_argument("--ranks", default=None, metavar="RANKS",
                        help="read only these ranks: 0-3, 1,3, local0, or by the job's "
                             "parallel coordinates: tp=0, 'pp=1 tp=0-3', pp=last (the ranks "
                             "they wait for may be among the others)")
    across.add_arguments(parser)
    # Asked of another host by --hosts: its part of the job with this rendezvous.
    parser.add_argument("--rendezvous", default=None, help=argparse.SUPPRESS)


def _fail(args: argparse.Namespace, message: str) -> int:
    return report(BadInput(message), as_json=args.json, prog=PROG)


def run(args: argparse.Namespace) -> int:
    t0 = time.monotonic()
    if args.samples < 2 or args.samples > 100:
        return _fail(args, "--samples must be from 2 to 100")
    if not 0 <= args.interval <= 60 or not 0 < args.timeout <= 600 \
            or not 0 <= args.watch <= 600:
        return _fail(args, "--interval must be from 0 to 60, --timeout from 0 to 600 and "
                           "--watch from 0 to 600")
    try:
        got = _read(args)
    except BadInput as exc:
        return report(exc, as_json=args.json, prog=PROG)
    except stk.StacksError as exc:  # no py-spy where a rank needs it
        return _fail(args, str(exc))
    except KeyboardInterrupt:
        return 130
    job, seen, w = got
    groups, descs = fnd.groups_of(seen)
    fnd.settle(seen, groups)
    # A rank the others wait for, busy where it is: computing (an eval) or spinning.
    busy_progress.complete([s for s in seen if s.host == args.here])
    cls = classes(seen)
    verdict = fnd.judge(seen, cls, groups, descs)
    read = any(s.reads for s in seen)
    if not read:  # nothing to judge by: neither healthy nor a culprit
        verdict = fnd.Verdict([], None)
    try:
        if args.json:
            for line in out.lines(cls, seen, verdict):
                print(json.dumps(line, ensure_ascii=False))
            print(json.dumps(out.done(time.monotonic() - t0, seen)), flush=True)
        else:
            head = out.Head(job.id, time.monotonic() - t0,
                            len(w.reads) if w is not None else 0,
                            w.seconds if w is not None else 0.0)
            sys.stdout.write(out.text(head, cls, seen, verdict))
            sys.stdout.flush()
    except BrokenPipeError:  # `rankdebug diagnose JOB | head`: the reader has gone
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0 if read else FAILED


def _read(args: argparse.Namespace) -> tuple[Job, list[Seen], Watch | None]:
    """The job, every rank of it as seen (this host's read here, ``--hosts``' there), and
    this host's reads; raises BadInput for a bad job or host."""
    remote = across.remote_of(args)
    found = discover(gpus=False)
    # Each host finds its part of the job itself (by its rendezvous): asked once, not twice.
    quick = across.one_round(remote, found, args.job) if args.ranks is None else None
    if quick is None and remote is not None:
        found = discover_all(args, gpus=False)
    bad = [n for n in found.nodes if n.get("error")]
    if bad:
        raise BadInput(str(bad[0]["error"]))
    job = (across.by_rendezvous(found.jobs, args.rendezvous) if args.rendezvous is not None
           else find_job(found.jobs, args.job))
    if job is None:
        raise BadInput(f"no job {args.job!r} (see `rankdebug jobs`)")
    parts = across.parts(found, job) if remote is not None and quick is None else []
    if quick is not None:
        parts = quick[1]
        args.rendezvous_there = across.rendezvous_of(job)
    args.here = found.host
    only: set[int] | None = None
    if args.ranks is not None:
        keep = job_coords.pick(args.ranks, job, found.host)  # raises RanksError
        job.ranks = [r for r in job.ranks if r in keep]
        only = {r.rank for r in keep if r.rank is not None}
        # Another host reads the same ranks, by number: only a host that has some.
        args.ranks_there = ",".join(map(str, sorted(only)))
        parts = [p for p in parts if any(r.host == p[1] for r in keep)]
    there = {name for _, name, _ in parts}
    here = [r for r in job.ranks if r.host == found.host]
    seen: list[Seen] = []
    pending: Future[list[Seen]] | None = None
    if parts and remote is not None:
        pending = ThreadPoolExecutor(max_workers=1).submit(_remote, remote, parts, job, args)
    seen += _away(job, found.host, there)
    seen += [s for s in _gone(job, found.host, here) if only is None or s.rank in only]
    numbered = [r for r in here if r.rank is not None]
    w = _watch(numbered, args)
    judged = [_judge(r, w) for r in numbered if r.pid is not None]
    native_wait.complete(judged)  # blocked in backward: DDP's all_reduce, read below Python
    seen += judged
    seen += [Seen(r.rank, r.pid, r.host, reason="not started yet" if r.pid is None
                  else "its environment names no rank number")
             for r in here if r.pid is None or r.rank is None]
    if pending is not None:
        seen += pending.result()
    seen += _missing(job, seen, only)
    return job, seen, w


def _watch(ranks: list[Rank], args: argparse.Namespace) -> Watch | None:
    targets: list[Target] = [(r.pid, r.rank, r.host) for r in ranks if r.pid is not None]
    if not targets:
        return None
    sockets = {r.pid: r.socket for r in ranks if r.pid is not None and r.socket is not None}

    def enough(w: Watch) -> bool:
        if len(w.reads) < args.samples:
            # Every rank moved: healthy, unless some read caught a rank in a collective,
            # then the full count tells the slowest from those that wait for it.
            return _all_moved(w) and not _caught_waiting(w)
        if w.seconds >= args.watch:
            return True
        # Ranks wait in a collective (or blocked in torch, maybe below Python: DDP's in
        # backward): the rank they wait for may yet come, or be seen moving (a long eval on
        # rank 0 looks the same for a second, at one line of MLP.forward).
        judged = [judge(r, w.of(r.pid), w.activity(r.pid), w.seconds, False)
                  for r in ranks if r.pid is not None]
        return not any(s.state == "waiting" or native_wait.candidate(s) for s in judged)

    return watch(targets, sockets, interval=args.interval, timeout=args.timeout,
                 enough=enough)


def _caught_waiting(w: Watch) -> bool:
    return any(position(rs) is not None for read in w.reads for rs in read.stacks.values()
               if rs.error is None)


def _all_moved(w: Watch) -> bool:
    """Every rank read has moved between the first read and the last: more reads could
    only say so again."""
    first, last = w.reads[0].stacks, w.reads[-1].stacks
    for pid, a in first.items():
        b = last.get(pid)
        if b is None or a.error or b.error:
            return False
        ma, mb = marks(a), marks(b)
        if ma is not None and mb is not None and ma != mb:
            continue
        fa, fb = _main_frames(a), _main_frames(b)
        if fa is None or fb is None or place(fa) == place(fb):
            return False
    return True


def _main_frames(rs: stk.RankStack) -> list[Any] | None:
    main = next((t for t in rs.threads if t.main), None)
    return main.frames if main is not None and not any(t.raised for t in rs.threads) else None


def _judge(rank: Rank, w: Watch | None) -> Seen:
    assert rank.pid is not None and w is not None
    gone = procstat.is_zombie(rank.pid)
    return judge(rank, w.of(rank.pid), w.activity(rank.pid), w.seconds, gone)


def _away(job: Job, host: str, there: set[str]) -> list[Seen]:
    """Ranks on hosts no ``--hosts`` reaches: unknown, and how to reach them."""
    return [Seen(r.rank, r.pid, r.host, reason=across.unreached(r.rank, r.host))
            for r in job.ranks if r.host != host and r.host not in there and r.rank is not None]


def _gone(job: Job, host: str, here: list[Rank]) -> list[Seen]:
    known = {r.rank for r in job.ranks}
    return [Seen(rank, None, host, state="exited", reason="exited")
            for rank in gone_here(job, host) if rank not in known]


def _missing(job: Job, seen: list[Seen], only: set[int] | None = None) -> list[Seen]:
    """Ranks of the world (of ``only``, with --ranks) that nothing found: not on this host
    (another node's)."""
    size = job.world_size
    if size is None or size > MAX_WORLD:
        return []
    known = {s.rank for s in seen}
    return [Seen(rank, None, None, reason="not found on this host (another node's? "
                                          "--hosts reaches it)")
            for rank in range(size) if rank not in known and (only is None or rank in only)]


def _remote(remote: across.Remote, parts: list[tuple[str, str, str]], job: Job,
            args: argparse.Namespace) -> list[Seen]:
    """``rankdebug diagnose`` of each other host's part of the job, at once: its ``rank``
    lines; a host that fails leaves its ranks unknown, saying why."""
    verb = ["--json", "--samples", str(args.samples), "--interval", str(args.interval),
            "--timeout", str(args.timeout), "--watch", str(args.watch),
            *(["--ranks", args.ranks_there] if args.ranks is not None else []),
            *(["--rendezvous", args.rendezvous_there]
              if getattr(args, "rendezvous_there", None) else [])]

    def one(part: tuple[str, str, str]) -> list[Seen]:
        ssh_host, name, there_id = part
        try:
            got = across.run_verb(remote, ssh_host, ["diagnose", there_id, *verb],
                                  timeout=args.timeout * args.samples + 60)
            lines = [json.loads(line) for line in got.stdout.splitlines() if line.strip()]
        except (across.RemoteVerbError, ValueError) as exc:
            return [Seen(r.rank, r.pid, name, reason=str(exc)) for r in job.ranks
                    if r.host == name]
        error = next((ln["error"] for ln in lines if isinstance(ln, dict) and "error" in ln),
                     None)
        if error is not None:
            return [Seen(r.rank, r.pid, name, reason=f"{name}: {error.get('message')}")
                    for r in job.ranks if r.host == name]
        # Its own ranks only: it names the others as unread (ours, and other hosts').
        if not name:  # one round: the host names itself in its ranks' lines
            said = {ln.get("host") for ln in lines if isinstance(ln, dict)
                    and ln.get("event") == "rank" and ln.get("pid") is not None}
            said.discard(None)
            if len(said) != 1:
                return []
            name = str(said.pop())
            out = [Seen.from_json(ln) for ln in lines if isinstance(ln, dict)
                   and ln.get("event") == "rank" and ln.get("host") == name]
            for s in out:
                s.host = across.name_of(name, ssh_host, args.here)
            return out
        return [Seen.from_json(ln) for ln in lines if isinstance(ln, dict)
                and ln.get("event") == "rank" and ln.get("host") == name]

    with ThreadPoolExecutor(max_workers=min(across.AT_ONCE, len(parts))) as pool:
        return [s for got in pool.map(one, parts) for s in got]

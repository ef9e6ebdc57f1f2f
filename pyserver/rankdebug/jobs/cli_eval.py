"""``rankdebug eval JOB RANKS CODE``: run code in live ranks and compare the values.

    rankdebug eval 20261122-152550 1 "optimizer.param_groups[0]['lr']"
    rankdebug eval JOB all "model.fc.weight" --json
    rankdebug eval JOB 0-3 "loss.item()" --tolerance 1e-6
    rankdebug eval JOB 0 "self.state.global_step" --frame training_step
    rankdebug eval JOB all "loss.item()" --hosts a,b   also the job's ranks on hosts a and b

RANKS uses the quick-pick's grammar (``all``, ``0-3``, ``1,3``, ``local0``) or selects by the
ranks' parallel coordinates (``tp=0``, ``pp=1 tp=0-3``: ``jobs.job_coords``). Every rank
with a handler answers: ranks of a job started with ``rankdebug launch --arm``, chosen
ranks (running, or paused under the debugger) and ranks held at an exception. The code runs
in a thread of each rank, as a small REPL (``runtime.repl``: statements run, prints are
captured, the last expression is the value), in the user's frames on the main thread's
stack (of a rank stopped at an uncaught exception: the traceback's, the raising frame's
locals first), or the frame ``--frame`` names (an index, 0 the innermost; ``FILE:LINE``; or a
function name, plain or qualified: ``step``, ``Block.forward``, ``Module._call_impl``). A
name prefers the user's code; one that fits several of the user's functions is an error that
lists them (``"candidates"`` in ``--json``). Code still running at ``--timeout`` is stopped
in the rank. A tensor's snapshot, kept in each rank to narrow a difference down, is dropped
once the compare is done.

``--json``: one line per rank, ``{"event": "result", "rank", "text", "type"}`` (plus
``"summary"`` for tensors and arrays, ``"output"`` for what was printed) or
``{"event": "error", "rank", "message"}``; then ``{"event": "compare", "groups":
[{"ranks", "text"}, ...]}``, the largest group first; a tensor group that differs from the
largest says where (``"differs": {"from", "first", "last", "at"}``). Without ``--json``: the
value alone for one rank, else a table with the odd ranks marked.

``--hosts``: each host's ranks are read there (by ``rankdebug eval`` on that host, through
its warm agent, ``jobs.node_agent``), which answers with its lines grouped into value classes
(``jobs.fanin``); the lines here list every rank as ever.

Exit status 0 when every rank answered, 1 when one failed (the code raised, no answer within
``--timeout``), 2 for a bad request (no such job or rank, a bad RANKS, no handler).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

from rankdebug import ranks as rank_spec
from rankdebug.errors import BAD_INPUT, FAILED, BadInput, fail
from rankdebug.jobs import job_coords, one_point
from rankdebug.jobs.analysis import compare, compare_per
from rankdebug.jobs.cli_jobs import discover_all
from rankdebug.jobs.discover import Job, Rank, discover, find_job
from rankdebug.jobs.nodes import across, fanin
from rankdebug.runtime.wire import WireError, ask, ask_all


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Run code in live ranks (armed, chosen or held) and compare the "
                          "values across ranks.")
    parser.add_argument("job", help="job id, id prefix or launcher pid")
    parser.add_argument("ranks", help="which ranks: 0, 1,3, 0-3, all, local0, or by the "
                                      "job's parallel coordinates: tp=0, 'pp=1 tp=0-3', "
                                      "pp=last")
    parser.add_argument("expr", help="Python code, e.g. 'optimizer.param_groups[0]'; "
                                     "statements run, the last expression is the value")
    parser.add_argument("--json", action="store_true", help="JSON lines on stdout")
    parser.add_argument("--timeout", type=float, default=10.0,
                        help="seconds to wait for a rank (default %(default)s)")
    parser.add_argument("--tolerance", type=float, default=None, metavar="T",
                        help="numbers and tensors within T of each other are equal")
    parser.add_argument("--frame", default=None,
                        help="the frame to run in: an index (0 = innermost), FILE:LINE, or a "
                             "function name, plain or qualified (step, Block.forward); a name "
                             "prefers the user's code (default: the user's frames, innermost "
                             "first; at an uncaught exception, the traceback's)")
    parser.add_argument("--now", action="store_true",
                        help="read each rank where it is now, not at the next optimizer step "
                             "they all reach (the results then say each rank's collective "
                             "count, and a compare warns when they differ)")
    parser.add_argument("--per", default=None, metavar="DIM",
                        help="compare within each value of a parallel dimension (or several, "
                             "comma-separated): --per dp compares the tp ranks of each dp "
                             "replica, --per tp the dp replicas of each tensor shard")
    parser.add_argument("--function", default=None, help=argparse.SUPPRESS)
    across.add_arguments(parser)
    # Asked of another host by --hosts: its lines as value classes (``jobs.fanin``).
    parser.add_argument("--node-answer", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--rendezvous", default=None, help=argparse.SUPPRESS)


def _fail(args: argparse.Namespace, message: str, code: int = BAD_INPUT) -> int:
    return fail(message, as_json=args.json, prog="rankdebug eval", code=code)


def _pick(job: Job, spec: str) -> tuple[list[Rank], list[int]]:
    """The job's ranks that ``spec`` names, and numbers it names that the job lacks."""
    parts = rank_spec.items(spec)  # raises RanksError on a malformed spec
    picked = [r for r in job.ranks
              if r.rank is not None and rank_spec.chosen(spec, r.rank, r.local_rank)]
    have = {r.rank for r in job.ranks if r.rank is not None}
    missing = sorted({n for p in parts if p[0].isdigit()
                      for n in rank_spec.numbers(p)} - have)
    return sorted(picked, key=lambda r: r.rank or 0), missing


def _no_handler(job: Job, rank: Rank) -> str:
    return (f"rank {rank.rank} of job {job.id} has no handler: eval works on ranks of a job "
            "started with `rankdebug launch --arm`, on chosen ranks and on ranks held at an "
            f"exception; attach a debugger instead (`rankdebug attach {job.id} {rank.rank}`)")


def _frame(text: str | None) -> int | str | None:
    if text is None:
        return None
    return int(text) if text.lstrip("-").isdigit() else text


def _ask(args: argparse.Namespace, key: str, ranks: list[Rank],
         at: int | None = None) -> list[dict[str, Any]]:
    """Every rank's reply (or its error as one), all asked at once (``wire.ask_all``);
    with ``at``, each reads after its first optimizer step ending at that count or later."""
    request: dict[str, Any] = {"command": "eval", "expr": args.expr, "timeout": args.timeout,
                               "keep": key}
    if args.frame is not None:
        request["frame"] = _frame(args.frame)
    if args.function:
        request["function"] = args.function
    if at is not None:
        request["at"] = {"seq": at}
    # The rank's own timeout answers first (with at: the wait for the step, then the
    # code's); ours covers a rank that cannot answer at all.
    wait = args.timeout * (2 if at is not None else 1) + 5.0
    got = ask_all([str(r.socket) for r in ranks], request, timeout=wait)
    replies = []
    for rank, one in zip(ranks, got, strict=True):
        reply = (dict(one.reply or {"event": "error", "message": str(one)})
                 if isinstance(one, WireError) else one)
        reply["rank"] = rank.rank
        replies.append(reply)
    return replies


def _result_line(job: Job, args: argparse.Namespace, reply: dict[str, Any]) -> dict[str, Any]:
    if reply.get("event") != "result":
        # "candidates": the frames an ambiguous --frame name fits (index, function, file, line)
        return {"event": "error", "rank": reply["rank"],
                "message": str(reply.get("message", "no answer")),
                **{k: reply[k] for k in ("line", "candidates") if k in reply}}
    out = {"event": "result", "job": job.id, "rank": reply["rank"], "pid": reply.get("pid"),
           "expr": args.expr, "text": str(reply.get("text", "")), "type": reply.get("type")}
    for extra in ("summary", "output", "number", "seq"):
        if extra in reply:
            out[extra] = reply[extra]
    return out


def _short(summary: dict[str, Any]) -> str:
    def num(x: object) -> str:
        return f"{x:.6g}" if isinstance(x, float) else str(x)

    bits = [f"{list(summary['shape'])} {summary['dtype']}",
            f"min {num(summary['min'])} max {num(summary['max'])} mean {num(summary['mean'])}"]
    if summary.get("nan"):
        bits.append(f"nan {summary['nan']}")
    if summary.get("inf"):
        bits.append(f"inf {summary['inf']}")
    if summary.get("checksum"):
        bits.append(f"md5 {summary['checksum'][:8]}")
    return "  ".join(bits)


def _first_line(text: str, width: int = 60) -> str:
    line = text.splitlines()[0] if text else ""
    return line if len(line) <= width and "\n" not in text.strip() else line[:width - 1] + "…"


def render(lines: list[dict[str, Any]], groups: list[compare.Group]) -> str:
    odd = {r for g in groups[1:] for r in g.ranks}
    out = []
    for line in lines:
        mark = "*" if line["rank"] in odd else " "
        if line["event"] == "error":
            out.append(f"{mark} rank {line['rank']:>3}  error: {line['message']}")
            continue
        what = _short(line["summary"]) if "summary" in line else _first_line(line["text"])
        out.append(f"{mark} rank {line['rank']:>3}  {what}")
        out.extend(f"             | {text}" for text in line.get("output", "").splitlines())
    if len(groups) > 1:
        out.append("")
        for g in groups:
            where = ""
            if g.differs and g.differs.get("first") is not None:
                d = g.differs
                span = (f"element {d['first']}" if d["first"] == d["last"]
                        else f"elements {d['first']}..{d['last']}")
                where = f"  differs from rank {d['from']} at {span} (index {d['at']})"
            out.append(f"  {rank_spec.label(g.ranks)}: {_first_line(g.text, 40)}{where}")
    elif groups:
        out.append(f"\nall {len(groups[0].ranks)} ranks equal")
    return "\n".join(out) + "\n"


Parts = list[tuple[str, str, str, list[Rank]]]  # (ssh host, its name, the job there, ranks)


def _targets(args: argparse.Namespace) -> tuple[Job, list[Rank], list[Rank], Parts]:
    """The job, its ranks RANKS names, those of them with a handler here, and the ranks
    each ``--hosts`` host reads; raises BadInput."""
    if args.rendezvous is not None:
        return _part(args)
    remote = across.remote_of(args)
    found = discover(gpus=False)
    # "all" of a job with a rendezvous: each host finds its part itself, asked once.
    quick = across.one_round(remote, found, args.job) if args.ranks == "all" else None
    if quick is not None:
        args.rendezvous_there = across.rendezvous_of(quick[0])
        picked = [r for r in quick[0].ranks if r.host == found.host]
        return (quick[0], picked, [r for r in picked if r.socket is not None],
                [(host, "", "-", []) for host, _, _ in quick[1]])
    if remote is not None:
        found = discover_all(args, gpus=False)
    job = find_job(found.jobs, args.job)
    if job is None:
        raise BadInput(f"no job {args.job!r} (see `rankdebug jobs`)")
    try:
        picked, missing = _pick(job, job_coords.resolve(args.ranks, job, found.host))
    except rank_spec.RanksError as exc:
        raise BadInput(str(exc).replace("--ranks", "RANKS")) from None
    if missing:
        raise BadInput(f"job {job.id} has no rank {', '.join(map(str, missing))}")
    if not picked:
        raise BadInput(f"job {job.id} has no rank matching {args.ranks!r} yet")
    parts: Parts = []
    for ssh_host, name, there_id in across.parts(found, job):
        mine = [r for r in picked if r.host == name]
        if mine:
            parts.append((ssh_host, name, there_id, mine))
    there = {name for _, name, _, _ in parts}
    picked_here = [r for r in picked if r.host not in there]
    reachable = [r for r in picked_here if r.socket is not None]
    if not reachable and not parts:
        raise BadInput(_no_handler(job, picked[0]))
    return job, picked_here, reachable, parts


def _part(args: argparse.Namespace) -> tuple[Job, list[Rank], list[Rank], Parts]:
    """``--rendezvous``: this host's ranks of that job that RANKS names (none: an empty
    answer, not an error; the asker reports the ranks no host has)."""
    found = discover(gpus=False)
    job = across.by_rendezvous(found.jobs, args.rendezvous)
    if job is None:
        return Job(id="-", source="scan", host=found.host, launcher=None, launcher_pid=None,
                   command=[], cwd=None, start_time=None, world_size=None), [], [], []
    try:
        picked, _ = _pick(job, job_coords.resolve(args.ranks, job, found.host))
    except rank_spec.RanksError as exc:
        raise BadInput(str(exc).replace("--ranks", "RANKS")) from None
    picked = [r for r in picked if r.host == found.host]
    return job, picked, [r for r in picked if r.socket is not None], []


def _remote(args: argparse.Namespace, parts: Parts, job: str) -> list[dict[str, Any]]:
    """``rankdebug eval`` of each host's ranks there, at once (``--node-answer``: its lines
    as value classes); a host that fails gives an error line for each of its ranks."""
    remote = across.remote_of(args)
    assert remote is not None
    flags = ["--json", "--node-answer", "--timeout", str(args.timeout),
             *(["--frame", args.frame] if args.frame is not None else []),
             *(["--now"] if args.now else []),
             *(["--function", args.function] if args.function else []),
             *(["--rendezvous", args.rendezvous_there]
               if getattr(args, "rendezvous_there", None) else [])]
    wait = args.timeout * 3 + 60.0

    def one(part: tuple[str, str, str, list[Rank]]) -> list[dict[str, Any]]:
        ssh_host, name, there, ranks = part
        spec = ",".join(str(r.rank) for r in ranks) if ranks else args.ranks
        try:
            got = across.run_verb(remote, ssh_host, ["eval", there, spec, args.expr, *flags],
                                  wait)
            answer = json.loads(got.stdout.strip().splitlines()[-1])
            if "error" in answer and "classes" not in answer:
                raise ValueError(f"{name or ssh_host}: {answer['error'].get('message')}")
            lines = fanin.eval_lines(answer)
        except (across.RemoteVerbError, ValueError, IndexError, AttributeError) as exc:
            if not ranks:  # which ranks it has is not known here: one line for the host
                print(f"rankdebug eval: {exc}", file=sys.stderr)
            return [{"event": "error", "rank": r.rank, "message": str(exc)} for r in ranks]
        for line in lines:  # the job as this machine names it
            if "job" in line:
                line["job"] = job
        return lines

    with ThreadPoolExecutor(max_workers=min(across.AT_ONCE, len(parts)) or 1) as pool:
        return [line for got in pool.map(one, parts) for line in got]


def _groups(args: argparse.Namespace, key: str, reachable: list[Rank],
            lines: list[dict[str, Any]]) -> list[compare.Group]:
    sockets = {r.rank: r.socket for r in reachable}

    def digest(rank: int, ranges: list[list[int]]) -> list[dict[str, Any]]:
        path = sockets.get(rank)
        if path is None:  # a rank of another host: its snapshot is there
            raise KeyError(f"rank {rank} is read on another host")
        got = ask(path, {"command": "digest", "keep": key, "ranges": ranges,
                         "stats": args.tolerance is not None},  # read only with a tolerance
                  timeout=args.timeout + 5.0)
        return list(got["ranges"])

    results = [line for line in lines if line["event"] == "result"]
    try:
        return compare.group(results, args.tolerance, digest)
    except (WireError, KeyError) as exc:  # a rank that ended meanwhile: groups unnarrowed
        print(f"rankdebug eval: cannot narrow the difference down: {exc}", file=sys.stderr)
        return compare.group(results, args.tolerance)


def _release(key: str, reachable: list[Rank], lines: list[dict[str, Any]]) -> None:
    """The compare is done: the ranks that kept a snapshot of their value drop it now."""
    kept = {line["rank"] for line in lines if "summary" in line}
    paths = [str(r.socket) for r in reachable if r.rank in kept]
    if paths:
        ask_all(paths, {"command": "release", "keep": key}, timeout=5.0)


def _print(args: argparse.Namespace, lines: list[dict[str, Any]],
           groups: list[compare.Group], at: dict[str, Any] | None,
           warning: str | None) -> None:
    if args.json:
        for line in lines:
            print(json.dumps(line))
        event: dict[str, Any] = {"event": "compare", "groups": [g.to_json() for g in groups],
                                 "at": at}
        if warning:
            event["warning"] = warning
        print(json.dumps(event))
    elif len(lines) == 1:
        line = lines[0]
        if line["event"] == "error":
            print(f"rankdebug eval: rank {line['rank']}: {line['message']}", file=sys.stderr)
        else:
            sys.stdout.write(line.get("output", ""))
            print(line["text"])
    else:
        sys.stdout.write(render(lines, groups))
        said = one_point.describe(at)
        if said:
            print(said)
        if warning:
            print(f"warning: {warning}")


def run(args: argparse.Namespace) -> int:
    if args.timeout <= 0:
        return _fail(args, "--timeout must be more than 0 seconds")
    if args.tolerance is not None and not args.tolerance >= 0:
        return _fail(args, "--tolerance must be 0 or more")
    try:
        job, picked, reachable, parts = _targets(args)
    except BadInput as exc:
        return _fail(args, exc.message)
    key = f"eval-{os.getpid()}-{time.monotonic_ns()}"
    pending = (ThreadPoolExecutor(max_workers=1).submit(_remote, args, parts, job.id)
               if parts else None)  # the other hosts read theirs meanwhile
    replies, at, note = (one_point.read(args, reachable,
                                        lambda at: _ask(args, key, reachable, at))
                         if reachable else ([], None, None))
    lines = [_result_line(job, args, reply) for reply in replies]
    lines += [{"event": "error", "rank": r.rank, "message": _no_handler(job, r)}
              for r in picked if r.socket is None]
    if pending is not None:
        lines += pending.result()
    lines.sort(key=lambda line: int(line["rank"]))
    if args.node_answer:  # asked by another host's --hosts: its lines as value classes
        _release(key, reachable, lines)
        print(json.dumps({**fanin.eval_answer(lines), "at": at, "warning": note}))
        return FAILED if any(line["event"] == "error" for line in lines) else 0
    if args.per is not None:
        return _per(args, _Read(key, reachable, lines, at, note), _coords(job, picked, parts))
    try:
        groups = _groups(args, key, reachable, lines)
    finally:
        _release(key, reachable, lines)
    warning = one_point.warning(at, lines, groups, note)
    _print(args, lines, groups, at, warning)
    return FAILED if any(line["event"] == "error" for line in lines) else 0


class _Read(NamedTuple):
    """What the ranks answered (``run``), for ``--per``'s compares."""

    key: str
    reachable: list[Rank]
    lines: list[dict[str, Any]]
    at: dict[str, Any] | None
    note: str | None


def _coords(job: Job, picked: list[Rank], parts: Parts) -> dict[int, dict[str, int] | None]:
    """The named ranks' coordinates (asked of this host's ranks that recorded none yet)."""
    ranks = picked + [r for *_, mine in parts for r in mine]
    if any(r.coords is None for r in ranks) and picked:
        job_coords.fill([job], picked[0].host)
    return {r.rank: r.coords for r in ranks if r.rank is not None}


def _per(args: argparse.Namespace, read: _Read,
         coords: dict[int, dict[str, int] | None]) -> int:
    """``--per DIM``: one compare per set of ranks sharing DIM's value (``compare_per``)."""
    key, reachable, lines, at, note = read
    try:
        sets = compare_per.split([int(line["rank"]) for line in lines], coords,
                                 compare_per.parse(args.per))
    except BadInput as exc:
        _release(key, reachable, lines)
        return _fail(args, exc.message)
    try:
        compared = [(where, [ln for ln in lines if ln["rank"] in members])
                    for where, members in sets]
        results = [(where, subset, _groups(args, key, reachable, subset))
                   for where, subset in compared]
    finally:
        _release(key, reachable, lines)
    if args.json:
        for line in lines:
            print(json.dumps(line))
    for where, subset, groups in results:
        warning = one_point.warning(at, subset, groups, note)
        if args.json:
            event: dict[str, Any] = {"event": "compare", "per": where,
                                     "groups": [g.to_json() for g in groups], "at": at}
            if warning:
                event["warning"] = warning
            print(json.dumps(event))
        else:
            print(f"{job_coords.text(where)}:")
            sys.stdout.write(render(subset, groups))
            if warning:
                print(f"warning: {warning}")
    said = one_point.describe(at)
    if said and not args.json:
        print(said)
    return FAILED if any(line["event"] == "error" for line in lines) else 0

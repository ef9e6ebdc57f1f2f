"""Past one machine's worth of ranks (issue 34): each node answers for its own ranks, node 0
merges one answer per node.

1. ``--real`` (root, Linux): a namespace cluster of ``--nodes`` nodes (``tests/multinode/
   cluster.py``, a real sshd on each), each running ``--per-node`` armed stdlib-only ranks
   (``tests/multinode/fan.py``: every node's own ``rankdebug launch --arm``, one
   rendezvous), and from node 0 ``rankdebug jobs``, ``stacks --tree``, ``eval all`` and
   ``diagnose`` with ``--hosts`` (every other node), each the median wall time of ``--runs``
   (the whole command, Python's start included). Twice: through the hosts' warm agents
   (``jobs.node_agent``; started by a first, untimed run) and with ``RANKDEBUG_NO_AGENT=1``
   (``rankdebug VERB`` started over SSH on every host, every time); with ``--before REV``
   also as commit REV had the verbs. Each answer is checked: every rank once, the odd rank
   found (said when not).
2. ``--simulate``: node 0's side for up to 16,384 ranks over 2,048 nodes, fed by stand-in
   node answers made by the nodes' own code (``fanin.stacks_answer``, ``fanin.eval_answer``,
   a node's ``jobs --json`` and diagnose ``rank`` lines): each answer parsed, merged and the
   verb's JSON printed, as ``rankdebug VERB --json --hosts …`` does once the answers are
   in. The transport is left out (each node answers in parallel on its own machine; part 1
   measures it). Prints the curve, ranks → seconds.

    python benchmarks/fanin.py --simulate [--runs 3]
    python benchmarks/fanin.py --real [--nodes 16] [--per-node 64] [--runs 5] [--before REV]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "multinode"))
sys.path.insert(0, str(ROOT / "pyserver"))

from rankdebug.jobs.analysis import compare  # noqa: E402
from rankdebug.jobs.analysis import stacks as stk  # noqa: E402
from rankdebug.jobs.analysis.odd_ones import odd_ranks  # noqa: E402
from rankdebug.jobs.diagnose import findings as fnd  # noqa: E402
from rankdebug.jobs.diagnose import report as out  # noqa: E402
from rankdebug.jobs.diagnose.classes import classes  # noqa: E402
from rankdebug.jobs.diagnose.seen import Seen  # noqa: E402
from rankdebug.jobs.discover import Discovery  # noqa: E402
from rankdebug.jobs.nodes import across, fanin  # noqa: E402
from rankdebug.pyspy import Frame, Thread  # noqa: E402

ODD = 137
SCRIPT = "/work/train/many_ranks.py"
TARGET_S = {"jobs": 1.0, "stacks --tree": 1.0, "eval all": 1.0, "diagnose": 3.0}
SIM_TARGET_S = 3.0

# --- part 2: node 0's merge, fed by stand-in node answers ----------------------------------


def _frames(odd: bool) -> list[Frame]:
    inner = [Frame("load_batch", SCRIPT, 37)] if odd else [
        Frame("wait_for_peers", SCRIPT, 33), Frame("train_step", SCRIPT, 41)]
    return [*inner, Frame("rank_main", SCRIPT, 55), Frame("<module>", SCRIPT, 112)]


def _handler_frames() -> list[Frame]:
    lib = "/usr/lib/python3.11/threading.py"
    return [Frame("serve", "/opt/rankdebug/runtime/handler.py", 140),
            Frame("run", lib, 975), Frame("_bootstrap_inner", lib, 1038),
            Frame("_bootstrap", lib, 995)]


def _node_stacks(node: int, per_node: int) -> list[stk.RankStack]:
    out_ = []
    for local in range(per_node):
        rank = node * per_node + local
        pid = 100 + local
        main = Thread("MainThread", 1, pid, True, False, False, _frames(rank == ODD))
        handler = Thread("rankdebug-handler", 2, pid + 1000, False, True, True,
                         _handler_frames())
        out_.append(stk.RankStack(pid=pid, rank=rank, host=f"n{node}",
                                  threads=[main, handler], seconds=0.004, via="handler"))
    return out_


def _eval_lines(node: int, per_node: int) -> list[dict[str, Any]]:
    return [{"event": "result", "job": "sim", "rank": r, "pid": 100 + r % per_node,
             "expr": "weight_sum", "text": "1.5" if r == ODD else "1.0", "type": "float",
             "number": 1.5 if r == ODD else 1.0, "seq": None}
            for r in range(node * per_node, (node + 1) * per_node)]


def _jobs_answer(node: int, per_node: int, world: int) -> dict[str, Any]:
    ranks = [{"pid": 100 + local, "rank": node * per_node + local, "local_rank": local,
              "world_size": world, "host": f"n{node}", "state": "running",
              "proc_state": "sleeping", "cpu": 0.0, "cpu_time": 0.08, "rss": 13447168,
              "threads": 3, "command": [sys.executable, SCRIPT, "rank"], "cwd": "/work",
              "start_time": 1.7e9, "armed": True,
              "socket": f"/run/user/0/rankdebug/j{node}/rank-{node * per_node + local}.sock"}
             for local in range(per_node)]
    job = {"id": f"j{node}", "source": "registry", "host": f"n{node}", "launcher": "other",
           "launcher_pid": 8, "command": ["node-ranks"], "cwd": "/work",
           "start_time": 1.7e9, "world_size": world, "rendezvous": "n0:29777",
           "run_id": "fan", "armed": True, "ranks": ranks}
    return {"host": f"n{node}", "time": 1.7e9, "scan_ms": 2.0, "jobs": [job], "warnings": []}


def _seen_lines(node: int, per_node: int) -> list[dict[str, Any]]:
    lines = []
    for r in range(node * per_node, (node + 1) * per_node):
        frames = [{"file": f.file, "line": f.line, "function": f.name}
                  for f in _frames(r == ODD)]
        lines.append({"event": "rank", "rank": r, "pid": 100 + r % per_node,
                      "host": f"n{node}", "state": "running", "manner": "waking",
                      "firm": False, "moved": False, "progressed": None, "via": "handler",
                      "collective": None, "where": frames[0], "frames": frames,
                      "collectives": None, "seconds": 1.5, "cpu": 0.0, "wakes": 3,
                      "reads": 3, "waited": 0, "reason": None, "raised": None,
                      "debugger": False})
    return lines


def _answers(nodes: int, per_node: int) -> dict[str, list[str]]:
    """Each stand-in node's answer to each verb, as the text it sends."""
    world = nodes * per_node
    return {
        "stacks": [json.dumps(fanin.stacks_answer(_node_stacks(n, per_node), "sim", None,
                                                  0.01)) for n in range(nodes)],
        "eval": [json.dumps(fanin.eval_answer(_eval_lines(n, per_node)))
                 for n in range(nodes)],
        "jobs": [json.dumps(_jobs_answer(n, per_node, world)) for n in range(nodes)],
        "diagnose": ["\n".join(json.dumps(x) for x in _seen_lines(n, per_node))
                     for n in range(nodes)],
    }


def _merge_stacks(texts: list[str]) -> str:
    taken = [rs for i, t in enumerate(texts) for rs in fanin.stacks_of_answer(json.loads(t),
                                                                           f"n{i}")]
    groups = stk.group(taken, odd=odd_ranks([stk.main_keys(taken)]))
    view = stk.View(samples=1, collectives=[], tree=True)
    report = stk.report(taken, groups, "sim", 0.0, view)
    assert len(report["ranks"]) == len(taken) and report["odd"] == [ODD], report["odd"]
    return json.dumps(report)


def _merge_eval(texts: list[str]) -> str:
    lines = [x for t in texts for x in fanin.eval_lines(json.loads(t))]
    lines.sort(key=lambda x: int(x["rank"]))
    groups = compare.group([x for x in lines if x["event"] == "result"])
    assert groups[-1].ranks == [ODD]
    buf = io.StringIO()
    for x in lines:
        buf.write(json.dumps(x) + "\n")
    buf.write(json.dumps({"event": "compare", "groups": [g.to_json() for g in groups],
                          "at": None}) + "\n")
    return buf.getvalue()


def _merge_jobs(texts: list[str]) -> str:
    found = Discovery(jobs=[], host="here", time=0.0, scan_ms=0.0, processes=0)
    answers = [(f"n{i}", json.loads(t), None) for i, t in enumerate(texts)]
    merged = across.merge_jobs(found, answers)
    assert len(merged.jobs) == 1
    return json.dumps(merged.to_json())


def _merge_diagnose(texts: list[str]) -> str:
    seen = [Seen.from_json(json.loads(x)) for t in texts for x in t.splitlines()]
    groups, descs = fnd.groups_of(seen)
    fnd.settle(seen, groups)
    cls = classes(seen)
    verdict = fnd.judge(seen, cls, groups, descs)
    lines = [*out.lines(cls, seen, verdict), out.done(0.0, seen)]
    assert any(c["ranks"] == [ODD] for c in lines if c["event"] == "class")
    return "\n".join(json.dumps(x) for x in lines)


MERGES: dict[str, Callable[[list[str]], str]] = {
    "jobs": _merge_jobs, "stacks --tree": _merge_stacks, "eval all": _merge_eval,
    "diagnose": _merge_diagnose}
_VERB = {"jobs": "jobs", "stacks --tree": "stacks", "eval all": "eval",
         "diagnose": "diagnose"}


def simulate(runs: int) -> dict[int, dict[str, float]]:
    curve: dict[int, dict[str, float]] = {}
    per_node = 8
    for nodes in (128, 256, 512, 1024, 2048):
        answers = _answers(nodes, per_node)
        row = {}
        for name, merge in MERGES.items():
            times = []
            for _ in range(runs):
                t0 = time.perf_counter()
                with redirect_stdout(io.StringIO()):
                    merge(answers[_VERB[name]])
                times.append(time.perf_counter() - t0)
            row[name] = statistics.median(times)
        curve[nodes * per_node] = row
        print(f"{nodes * per_node:>6} ranks / {nodes:>4} nodes: "
              + "  ".join(f"{k} {v:.2f} s" for k, v in row.items()), flush=True)
    return curve


# --- part 1: the real cluster ----------------------------------------------------------------


def _wrong(name: str, got: Any, ranks: int) -> str | None:
    """What is wrong with the answer (a rank missing or twice, the odd one not found)."""
    text = got.stdout
    if got.returncode != 0:
        said = [x for x in text.splitlines() if '"error"' in x][:2]
        return f"exit {got.returncode}: {said} {got.stderr[-300:]}"
    try:
        if name == "jobs":
            jobs = [j for j in json.loads(text)["jobs"]
                    if (j.get("run_id") or "").startswith("fan")]
            seen = [r["rank"] for j in jobs for r in j["ranks"]]
            if len(jobs) != 1:
                return f"{len(jobs)} jobs listed, not one"
        elif name == "stacks --tree":
            report = json.loads(text)
            seen = [r["rank"] for r in report["ranks"] if r["error"] is None]
            if report["odd"] != [ODD]:
                return f"odd ranks {report['odd']}"
        elif name == "eval all":
            lines = [json.loads(x) for x in text.splitlines()]
            seen = [x["rank"] for x in lines[:-1] if x["event"] == "result"]
            if lines[-1]["groups"][-1]["ranks"] != [ODD]:
                return f"groups {[g['ranks'][:3] for g in lines[-1]['groups']]}"
        else:
            lines = [json.loads(x) for x in text.splitlines()]
            seen = [x["rank"] for x in lines if x["event"] == "rank" and x.get("reads")]
            if not any(x["ranks"] == [ODD] for x in lines if x["event"] == "class"):
                return "no class of the odd rank alone"
    except (ValueError, KeyError, IndexError) as exc:
        return f"unreadable answer: {exc!r}"
    if sorted(seen) != list(range(ranks)):
        return f"{len(set(seen))} of {ranks} ranks read ({len(seen)} lines)"
    return None


def _copy(rev: str | None, into: Path) -> str:
    """rankdebug as this checkout has it (``rev`` None) or as commit ``rev`` had it, in
    ``into`` (seen by every node); its path for PYTHONPATH."""
    if rev is None:
        shutil.copytree(ROOT / "pyserver" / "rankdebug", into / "rankdebug",
                        ignore=shutil.ignore_patterns("__pycache__"))
    else:
        into.mkdir(parents=True)
        tar = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "pyserver/rankdebug"],
                             check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "--strip-components=1", "-C", str(into)], input=tar,
                       check=True)
    return str(into)


def real(nodes: int, per_node: int, runs: int, before: str | None
         ) -> dict[str, dict[str, float]]:
    from cluster import start_cluster
    from fan import fan_job

    results: dict[str, dict[str, float]] = {}
    t0 = time.monotonic()
    # A copy of rankdebug that nobody edits meanwhile (a changed package starts new agents).
    frozen = Path(tempfile.mkdtemp(prefix="rd-fanin-", dir="/var/tmp"))
    now = _copy(None, frozen / "now")
    modes: list[tuple[str, dict[str, str]]] = [
        ("agents", {}), ("ssh each time", {"RANKDEBUG_NO_AGENT": "1"})]
    if before is not None:
        modes.append((f"before {before[:7]}",
                      {"PYTHONPATH": _copy(before, frozen / "before")}))
    with start_cluster(count=nodes) as cluster, fan_job(cluster, nodes, per_node, odd=ODD,
                                                        pythonpath=now) as fan:
        print(f"{fan.ranks} ranks on {nodes} nodes armed in {time.monotonic() - t0:.0f} s",
              flush=True)
        verbs = {"jobs": ["jobs", "--json", "--no-gpu"],
                 "stacks --tree": ["stacks", fan.job, "--json", "--tree"],
                 "eval all": ["eval", fan.job, "all", "weight_sum", "--json"],
                 "diagnose": ["diagnose", fan.job, "--json"]}
        for mode, extra in modes:
            fan.rankdebug("jobs", "--json", "--no-gpu", *fan.hosts(), timeout=300,
                          extra=extra)  # the agents started (untimed)
            row = {}
            for name, argv in verbs.items():
                times, wrong = [], []
                for _ in range(runs):
                    t = time.monotonic()
                    got = fan.rankdebug(*argv, *fan.hosts(), timeout=300, extra=extra)
                    times.append(time.monotonic() - t)
                    said = _wrong(name, got, fan.ranks)
                    if said is not None:
                        if not wrong:  # the first wrong answer kept, to be read
                            kept = (Path(tempfile.gettempdir())
                                    / f"fanin-wrong-{name.split()[0]}.txt")
                            kept.write_text(f"{said}\n{got.stdout}\n--- stderr\n{got.stderr}")
                            said += f" (answer in {kept})"
                        wrong.append(said)
                row[name] = statistics.median(times)
                print(f"  {mode:>15}: {name:<14} median {row[name]:.2f} s  "
                      f"({', '.join(f'{x:.2f}' for x in times)}; target "
                      f"{TARGET_S[name]:.0f} s; load {os.getloadavg()[0]:.0f})"
                      + (f"  WRONG in {len(wrong)} of {runs}: {wrong[0]}" if wrong
                         else "  every rank once, odd found"),
                      flush=True)
            results[mode] = row
    shutil.rmtree(frozen, ignore_errors=True)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--real", action="store_true")
    parser.add_argument("--simulate", action="store_true")
    parser.add_argument("--nodes", type=int, default=16)
    parser.add_argument("--per-node", type=int, default=64)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--before", default=None, metavar="REV",
                        help="also time the verbs as commit REV has them (e.g. before the "
                             "fan-in)")
    args = parser.parse_args()
    if not (args.real or args.simulate):
        args.real = args.simulate = True
    if args.simulate:
        print("node 0's merge of stand-in node answers (8 ranks a node), median of "
              f"{args.runs}; target {SIM_TARGET_S:.0f} s:", flush=True)
        curve = simulate(args.runs)
        print("\n| ranks | nodes | " + " | ".join(MERGES) + " |")
        print("|---:|---:|" + "---:|" * len(MERGES))
        for ranks, row in curve.items():
            print(f"| {ranks:,} | {ranks // 8:,} | "
                  + " | ".join(f"{v:.2f} s" for v in row.values()) + " |")
    if args.real:
        print(f"\n{args.nodes} namespace nodes x {args.per_node} armed ranks, from node 0 "
              f"(load average {os.getloadavg()[0]:.1f}):", flush=True)
        real(args.nodes, args.per_node, args.runs, args.before)
    return 0


if __name__ == "__main__":
    sys.exit(main())

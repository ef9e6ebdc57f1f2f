"""Hundreds of ranks (issue 18, "Scale"): ``rankdebug jobs``, ``stacks`` and ``eval`` over a
256-rank job among ~3,000 other processes, each against its target.

The job is ``tests/launch/scripts/many_ranks.py``: a launcher (a torchrun stand-in) that
starts ``--ranks`` lightweight rank processes with the launcher's variables (``RANK``,
``LOCAL_RANK``, ``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``, ``GROUP_RANK``,
``MASTER_ADDR``/``MASTER_PORT``), ``--per-node`` to a node, no torch. Rank 137 waits
somewhere else than the others and holds another value: the odd one out.

1. ``--others`` idle processes (``sleep``) fill /proc.
2. Armed: ``rankdebug launch --arm -- scale-launcher …`` (the real path: the bootstrap arms
   every rank, the supervisor registers them) → ``rankdebug jobs --json``, ``rankdebug stacks
   JOB --json`` (every rank through its handler), ``rankdebug eval JOB all weight_sum --json``.
3. Foreign: the same launcher started without rankdebug → ``rankdebug jobs --json`` (the job
   found by the /proc scan) and ``rankdebug stacks JOB --json`` (every rank through py-spy).
4. The views: the extension's pure functions (Training Jobs' tree of the 256 ranks ``jobs
   --json`` printed in step 2, the quick-pick's items for 1,024 ranks) under node, through
   ``tests/extension/unit/scale.test.ts`` (skipped with ``--no-views`` or without node).

Each figure is the wall time of the whole command, Python's start included (what the
extension waits for), the median of ``--runs``. Every process started here ends at the end,
on Ctrl-C, and when this script is killed (each polls its parent).

    python benchmarks/scale.py [--ranks 256] [--per-node 8] [--others 3000] [--runs 5]
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rankdebug.jobs.discover import Job, discover
from rankdebug.jobs.procfs import pids
from rankdebug.supervise.procs import parent_death_signal

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
JOB_SCRIPT = ROOT / "tests" / "launch" / "scripts" / "many_ranks.py"
ODD_RANK = 137

TARGETS_MS = {
    "jobs": 150.0,
    "stacks armed": 1000.0,
    "stacks py-spy": 10000.0,
    "eval all": 2000.0,
    "jobs view": 300.0,
    "quick-pick": 300.0,
}


class Stop(Exception):
    """SIGTERM: clean up as for Ctrl-C."""


def _stop(_signum: int, _frame: object) -> None:
    raise Stop


def cli(*args: str, timeout: float = 120.0, base: Path | None = None) -> Run:
    """``python -m rankdebug ARGS`` (``base``: the baseline checkout's): its wall time, CPU
    time (its own and its children's, py-spy's included), stdout and exit status."""
    env = None
    if base is not None:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [str(base / "pyserver"), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "rankdebug", *args], capture_output=True,
                         text=True, timeout=timeout, check=False, env=env)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Run(wall, cpu, out.stdout, out.returncode)


@dataclass
class Run:
    wall: float
    cpu: float
    stdout: str
    code: int


@dataclass
class Figure:
    """The runs of one command (and of the baseline's, interleaved)."""

    runs: list[Run] = field(default_factory=list)
    base: list[Run] = field(default_factory=list)
    notes: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ms": median_ms([r.wall for r in self.runs]),
                               "cpu_ms": median_ms([r.cpu for r in self.runs]),
                               "all_ms": [round(r.wall * 1000) for r in self.runs]}
        if self.base:
            out["base_ms"] = median_ms([r.wall for r in self.base])
            out["base_cpu_ms"] = median_ms([r.cpu for r in self.base])
        out.update(self.notes)
        return out


def timed(runs: int, args: list[str], check: Any, base: Path | None,
          timeout: float = 120.0) -> Figure:
    """``runs`` runs of ``rankdebug ARGS`` (each followed by the baseline's when there is
    one); ``check(run)`` raises on a wrong answer."""
    fig = Figure()
    for _ in range(runs):
        for where, into in ((None, fig.runs), (base, fig.base)):
            if where is None and into is fig.base:
                continue
            run = cli(*args, timeout=timeout, base=where)
            check(run)
            into.append(run)
    return fig


def median_ms(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 1)


@contextlib.contextmanager
def others(count: int) -> Iterator[None]:
    """``count`` idle processes (one bash and its ``sleep`` children, in a group of their
    own); the bash ends them all when this process goes away."""
    script = (f"for i in $(seq {count}); do sleep 3600 & done; echo ready; "
              f"while kill -0 {os.getpid()} 2>/dev/null; do sleep 1; done; kill 0")
    proc = subprocess.Popen(["bash", "-c", script], stdout=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        assert proc.stdout is not None
        proc.stdout.readline()
        yield
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def launcher(tmp: Path) -> Path:
    """An executable ``scale-launcher`` (plans as launcher ``other``, not as ``python``, so
    the launcher process is not taken for rank 0)."""
    path = tmp / "scale-launcher"
    path.write_text(f"#!/bin/sh\nexec {sys.executable} {JOB_SCRIPT} launch \"$@\"\n")
    path.chmod(0o700)
    return path


def wait_job(match: Any, ranks: int, armed: bool, timeout: float = 300.0) -> Job:
    """The job ``match(job)`` picks, once all its ranks run (and serve their handler)."""
    deadline = time.monotonic() + timeout
    seen = 0
    while time.monotonic() < deadline:
        for job in discover(gpus=False).jobs:
            if not match(job):
                continue
            ready = [r for r in job.ranks if r.pid is not None and (r.socket or not armed)]
            seen = len(ready)
            if seen >= ranks:
                return job
        time.sleep(1.0)
    raise RuntimeError(f"only {seen} of {ranks} ranks ready after {timeout:.0f} s")


def time_jobs(runs: int, job_id: str, ranks: int, base: Path | None) -> Figure:
    """``rankdebug jobs --json``; notes its own ``scan_ms``."""
    scans: list[float] = []

    def check(run: Run) -> None:
        answer = json.loads(run.stdout)
        job = next((j for j in answer["jobs"] if j["id"] == job_id), None)
        if run.code != 0 or job is None or len(job["ranks"]) != ranks:
            raise RuntimeError(f"jobs: exit {run.code}, job {job_id} "
                               f"{'missing' if job is None else len(job['ranks'])}")
        scans.append(float(answer["scan_ms"]) / 1000)

    fig = timed(runs, ["jobs", "--json", "--no-gpu"], check, base)
    fig.notes["scan_ms"] = median_ms(scans[::2] if base else scans)
    return fig


def time_stacks(runs: int, job_id: str, ranks: int, via: str, base: Path | None) -> Figure:
    """``rankdebug stacks JOB --json``: every rank read ``via`` its handler or py-spy."""
    last: dict[str, Any] = {}

    def check(run: Run) -> None:
        report = json.loads(run.stdout)
        got = [r for r in report["ranks"] if r["error"] is None and r["via"] == via]
        if run.code != 0 or len(got) != ranks:
            bad = [r for r in report["ranks"] if r["error"] or r["via"] != via][:3]
            raise RuntimeError(f"stacks: exit {run.code}, {len(got)}/{ranks} via {via}: {bad}")
        last.update(report)

    fig = timed(runs, ["stacks", job_id, "--json"], check, base, timeout=300)
    fig.notes.update(odd=last["odd"], rows=len(last["groups"]), samples=last["samples"])
    return fig


def time_eval(runs: int, job_id: str, ranks: int, base: Path | None) -> Figure:
    """``rankdebug eval JOB all weight_sum --json``: every rank answers."""
    groups: list[Any] = []

    def check(run: Run) -> None:
        lines = [json.loads(line) for line in run.stdout.splitlines()]
        answered = sum(1 for line in lines if line.get("event") == "result")
        if run.code != 0 or answered != ranks:
            raise RuntimeError(f"eval: exit {run.code}, {answered}/{ranks} answered: "
                               f"{run.stdout[-300:]}")
        groups[:] = [[len(g["ranks"]), g["text"]] for g in lines[-1]["groups"]]

    fig = timed(runs, ["eval", job_id, "all", "weight_sum", "--json"], check, base)
    fig.notes["groups"] = groups
    return fig


def tree_text(job_id: str) -> str:
    return cli("stacks", job_id, "--tree", "--samples", "1").stdout


def armed_phase(args: argparse.Namespace, tmp: Path, out: dict[str, Any]) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "rankdebug", "launch", "--arm", "--json", "--",
         str(launcher(tmp)), "--nproc", str(args.ranks), "--per-node", str(args.per_node)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True,
        start_new_session=True, preexec_fn=parent_death_signal(signal.SIGTERM))  # noqa: PLW1509
    try:
        assert proc.stdout is not None
        job_id = str(json.loads(proc.stdout.readline())["job"])
        t0 = time.monotonic()
        wait_job(lambda j: j.id == job_id, args.ranks, armed=True)
        print(f"armed: {args.ranks} ranks up and armed in {time.monotonic() - t0:.1f} s "
              f"(job {job_id})")
        time.sleep(2.0)
        # The first request of each kind finds every rank cold (its handler imports what
        # answers it): once, timed apart.
        out["stacks armed, first"] = {"ms": round(cli("stacks", job_id, "--json").wall * 1000)}
        out["eval all, first"] = {"ms": round(cli("eval", job_id, "all", "weight_sum",
                                                  "--json").wall * 1000)}
        jobs = time_jobs(args.runs, job_id, args.ranks, args.baseline)
        (tmp / "jobs.json").write_text(jobs.runs[-1].stdout)
        out["jobs"] = jobs.summary()
        out["stacks armed"] = time_stacks(args.runs, job_id, args.ranks, "handler",
                                          args.baseline).summary()
        out["eval all"] = time_eval(args.runs, job_id, args.ranks, args.baseline).summary()
        out["tree"] = tree_text(job_id)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def foreign_phase(args: argparse.Namespace, out: dict[str, Any]) -> None:
    proc = subprocess.Popen(
        [sys.executable, str(JOB_SCRIPT), "launch", "--nproc", str(args.ranks),
         "--per-node", str(args.per_node), "--master-port", "29778"],
        stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        t0 = time.monotonic()
        # Its launcher is no launcher rankdebug knows: the job is named after the ranks' parent.
        job = wait_job(lambda j: j.id.startswith(f"{proc.pid}@"), args.ranks, armed=False)
        print(f"foreign: {args.ranks} ranks up in {time.monotonic() - t0:.1f} s (job {job.id})")
        time.sleep(1.0)
        out["jobs (scan)"] = time_jobs(args.runs, job.id, args.ranks, args.baseline).summary()
        out["stacks py-spy"] = time_stacks(max(1, min(args.runs, 3)), job.id, args.ranks,
                                           "py-spy", args.baseline).summary()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def views_phase(jobs_json: Path | None, out: dict[str, Any]) -> None:
    """The extension's pure functions under node (``tests/extension/unit/scale.test.ts``)."""
    npx = shutil.which("npx")
    if npx is None or shutil.which("node") is None:
        print("views: no node here, skipped")
        return
    env = dict(os.environ)
    if jobs_json is not None:
        env["RANKDEBUG_SCALE_JOBS"] = str(jobs_json)
    build = subprocess.run(["node", "extension/esbuild.mjs", "--tests"], cwd=ROOT, env=env,
                           capture_output=True, text=True, check=False)
    if build.returncode != 0:
        print(f"views: build failed: {build.stderr[-500:]}")
        return
    run = subprocess.run([npx, "mocha", "--enable-source-maps", "out/unit/scale.test.js"],
                         cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    for line in run.stdout.splitlines():
        if "SCALE " in line:
            found = json.loads(line.split("SCALE ", 1)[1])
            out.setdefault("views", {}).update(found)
    if run.returncode != 0:
        print(f"views: the scale test failed:\n{run.stdout[-2000:]}")


def report(args: argparse.Namespace, out: dict[str, Any]) -> None:
    if not any(key in out for key in ("jobs", "jobs (scan)", "views")):
        return
    print()
    print(f"{out.get('processes')} processes in /proc ({out.get('others')} idle others), "
          f"{args.ranks} ranks, {args.per_node} per node; median of {args.runs} "
          f"(load {os.getloadavg()[0]:.1f}); wall ms, then CPU ms of the command and its "
          "children" + ("; b: the baseline's, interleaved" if args.baseline else ""))
    for target, what, got in _rows(args, out):
        if not got or got.get("ms") is None:
            continue
        goal = TARGETS_MS[target]
        verdict = "ok" if got["ms"] <= goal else "OVER"
        line = (f"  {what:<52} {got['ms']:>8.1f}  target {goal:>6.0f}  "
                f"{got['ms'] / goal:4.2f}x {verdict:<4}")
        if "cpu_ms" in got:
            line += f"  cpu {got['cpu_ms']:.0f}"
        if "base_ms" in got:
            line += f"  (b {got['base_ms']:.0f}, cpu {got['base_cpu_ms']:.0f})"
        if "scan_ms" in got:
            line += f"  scan {got['scan_ms']:.0f}"
        print(line)
    if "eval all" in out:
        print(f"  eval groups (ranks, value): {out['eval all']['groups']}")
    for key in ("stacks armed", "stacks py-spy"):
        if key in out:
            print(f"  {key}: odd ranks {out[key]['odd']} (expected [{ODD_RANK}]), "
                  f"{out[key]['rows']} rows, {out[key]['samples']} reads")
    if "tree" in out:
        print("  rankdebug stacks JOB --tree:")
        for line in out["tree"].splitlines():
            print(f"    {line}")


def _rows(args: argparse.Namespace, out: dict[str, Any],
          ) -> list[tuple[str, str, dict[str, Any] | None]]:
    """(target, what, figure) of every line of the report."""
    rows: list[tuple[str, str, dict[str, Any] | None]] = [
        ("jobs", f"rankdebug jobs --json, {args.ranks} armed ranks", out.get("jobs")),
        ("jobs", f"rankdebug jobs --json, {args.ranks} ranks found by the scan",
         out.get("jobs (scan)")),
        ("stacks armed", "rankdebug stacks JOB --json, via handlers", out.get("stacks armed")),
        ("stacks armed", "  the first one (every rank cold)", out.get("stacks armed, first")),
        ("stacks py-spy", "rankdebug stacks JOB --json, via py-spy", out.get("stacks py-spy")),
        ("eval all", "rankdebug eval JOB all EXPR --json", out.get("eval all")),
        ("eval all", "  the first one (every rank cold)", out.get("eval all, first"))]
    views = out.get("views", {})
    if views:
        rows.append(("jobs view", f"Training Jobs: {views.get('ranks')} ranks read and grouped",
                     {"ms": views.get("render_ms")}))
        jobs_cli = (out.get("jobs") or {}).get("ms")
        if jobs_cli is not None and views.get("refresh_ms") is not None:
            rows.append(("jobs view", "Training Jobs refresh: jobs --json, then regrouped",
                         {"ms": round(jobs_cli + views["refresh_ms"], 1)}))
        rows.append(("quick-pick", f"quick-pick items, {views.get('quickpick_ranks')} ranks",
                     {"ms": views.get("quickpick_ms")}))
    return rows


def hold(args: argparse.Namespace, tmp: Path) -> None:
    armed = subprocess.Popen(
        [sys.executable, "-m", "rankdebug", "launch", "--arm", "--json", "--",
         str(launcher(tmp)), "--nproc", str(args.ranks), "--per-node", str(args.per_node)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True,
        start_new_session=True, preexec_fn=parent_death_signal(signal.SIGTERM))  # noqa: PLW1509
    foreign = None if args.no_foreign else subprocess.Popen(
        [sys.executable, str(JOB_SCRIPT), "launch", "--nproc", str(args.ranks),
         "--per-node", str(args.per_node), "--master-port", "29778"],
        stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        assert armed.stdout is not None
        job_id = str(json.loads(armed.stdout.readline())["job"])
        wait_job(lambda j: j.id == job_id, args.ranks, armed=True)
        other = "none"
        if foreign is not None:
            pid = foreign.pid
            other = wait_job(lambda j: j.id.startswith(f"{pid}@"), args.ranks, armed=False).id
        print(f"holding: armed job {job_id}, foreign job {other}; Ctrl-C ends them",
              flush=True)
        while armed.poll() is None and (foreign is None or foreign.poll() is None):
            time.sleep(1)
    finally:
        armed.send_signal(signal.SIGTERM)
        if foreign is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(foreign.pid, signal.SIGTERM)
        armed.wait(60)
        if foreign is not None:
            foreign.wait(30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", type=int, default=256)
    parser.add_argument("--per-node", type=int, default=8)
    parser.add_argument("--others", type=int, default=3000,
                        help="idle processes besides the ranks (sleep)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-foreign", action="store_true", help="skip the py-spy phase")
    parser.add_argument("--no-views", action="store_true", help="skip the extension's part")
    parser.add_argument("--json-out", type=Path, default=None)
    parser.add_argument("--baseline", type=Path, default=None, metavar="CHECKOUT",
                        help="another checkout (git worktree add /tmp/base HEAD~3): every "
                             "command is also run with its rankdebug, interleaved")
    parser.add_argument("--hold", action="store_true",
                        help="start the processes and both jobs, print their ids and wait "
                             "(Ctrl-C ends everything): for profiling by hand")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even when started with `&`
    # As an installed package has them: no run pays for compiling what it imports.
    for tree in (ROOT / "pyserver", *([args.baseline / "pyserver"] if args.baseline else [])):
        compileall.compile_dir(str(tree), quiet=1)
    out: dict[str, Any] = {}
    try:
        with tempfile.TemporaryDirectory() as name, others(max(0, args.others - len(pids()))):
            tmp = Path(name)
            out["others"] = len(pids())
            out["processes"] = out["others"] + args.ranks
            if args.hold:
                hold(args, tmp)
                return 0
            armed_phase(args, tmp, out)
            if not args.no_foreign:
                foreign_phase(args, out)
            if not args.no_views:
                views_phase(tmp / "jobs.json" if (tmp / "jobs.json").exists() else None, out)
    except (KeyboardInterrupt, Stop):
        print("interrupted: everything started here is ended")
        return 130
    finally:
        report(args, out)
    if args.json_out is not None:
        args.json_out.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""``rankdebug diagnose JOB --json``, from its start to its last line (issue 33, "Measure"):

1. a hung gloo/CPU torchrun job (``tests/jobs/scripts/hang_job.py``, SCENARIO=skip: the last
   rank skipped a collective) of 4 and 16 ranks, found running (plain torchrun, read through
   py-spy) and started by ``rankdebug launch --arm`` (read through the handlers; the first
   diagnosis of an armed job finds every handler cold, so it is timed apart);
2. an armed job of 64 and 256 stdlib-only ranks (``tests/launch/scripts/many_ranks.py``,
   the ranks ``benchmarks/scale.py`` times ``stacks`` on): targets 2 s and 5 s.

Each figure is the wall time of the whole command, Python's start included (what a user
waits for), the median of ``--runs``; every answer is checked (a finding naming the last
rank for the hung job, every rank read for the large ones). A hung job is watched at least
``--watch`` seconds (2 by default) before a rank is named: that is most of its figure.

    python benchmarks/diagnose_speed.py [--runs 3] [--sizes 4,16] [--large 64,256]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from rankdebug.jobs.discover import Job, discover
from rankdebug.supervise.procs import parent_death_signal

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
HANG = ROOT / "tests" / "jobs" / "scripts" / "hang_job.py"
MANY = ROOT / "tests" / "launch" / "scripts" / "many_ranks.py"
BIN = Path(sys.executable).parent
TARGETS_S = {64: 2.0, 256: 5.0}
FOUND_16_TARGET_S = 5.0


def diagnose(job: str) -> tuple[float, list[dict[str, Any]], int]:
    t0 = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "rankdebug", "diagnose", job, "--json"],
                         capture_output=True, text=True, timeout=300, check=False)
    wall = time.monotonic() - t0
    lines = [json.loads(ln) for ln in out.stdout.splitlines() if ln.strip()]
    return wall, lines, out.returncode


def timed(job: str, runs: int, check: Callable[[list[dict[str, Any]]], None]
          ) -> list[float]:
    walls = []
    for _ in range(runs):
        wall, lines, code = diagnose(job)
        if code != 0 or not lines or lines[-1].get("event") != "done":
            raise RuntimeError(f"diagnose {job}: exit {code}: {lines[-3:]}")
        check(lines)
        walls.append(wall)
    return walls


def _env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ, MARKER_DIR=str(tmp), SCENARIO="skip", OMP_NUM_THREADS="1")
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return {k: v for k, v in env.items() if not k.startswith("RANKDEBUG_")}


def _wait_files(tmp: Path, count: int, proc: subprocess.Popen[Any], timeout: float = 600
                ) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len(list(tmp.glob("at-*"))) >= count:
            time.sleep(2.0)  # into the calls they stay in
            return
        if proc.poll() is not None:
            raise RuntimeError(f"the job ended with {proc.returncode}")
        time.sleep(0.5)
    raise RuntimeError("the job's ranks never got there")


@contextlib.contextmanager
def hung_job(nproc: int, armed: bool) -> Iterator[str]:
    """A hung ``hang_job.py`` (skip) of ``nproc`` ranks: its job id."""
    with tempfile.TemporaryDirectory(prefix="rd-diag-") as name:
        tmp = Path(name)
        torchrun = [str(BIN / "torchrun"), "--standalone", "--nproc_per_node", str(nproc),
                    str(HANG)]
        argv = ([sys.executable, "-m", "rankdebug", "launch", "--arm", "--json", "--",
                 *torchrun] if armed else torchrun)
        proc = subprocess.Popen(argv, env=_env(tmp), stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                                text=True, start_new_session=True,
                                preexec_fn=parent_death_signal(signal.SIGTERM))  # noqa: PLW1509
        try:
            assert proc.stdout is not None
            job = str(json.loads(proc.stdout.readline())["job"]) if armed else str(proc.pid)
            _wait_files(tmp, nproc, proc)
            yield job
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def _names_the_skipper(nproc: int) -> Callable[[list[dict[str, Any]]], None]:
    def check(lines: list[dict[str, Any]]) -> None:
        found = [ln for ln in lines if ln["event"] == "culprit"]
        if [f["ranks"] for f in found] != [[nproc - 1]] or lines[-1]["ranks_read"] != nproc:
            raise RuntimeError(f"wrong answer: {found} {lines[-1]}")
    return check


def _wait_many(job_id: str, ranks: int, timeout: float = 600) -> Job:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = next((j for j in discover(gpus=False).jobs if j.id == job_id), None)
        if job is not None and sum(1 for r in job.ranks if r.pid and r.socket) >= ranks:
            return job
        time.sleep(1.0)
    raise RuntimeError(f"{ranks} ranks not up and armed after {timeout:.0f} s")


@contextlib.contextmanager
def many_job(ranks: int) -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="rd-diag-") as name:
        launcher = Path(name) / "scale-launcher"
        launcher.write_text(f"#!/bin/sh\nexec {sys.executable} {MANY} launch \"$@\"\n")
        launcher.chmod(0o700)
        proc = subprocess.Popen(
            [sys.executable, "-m", "rankdebug", "launch", "--arm", "--json", "--",
             str(launcher), "--nproc", str(ranks), "--per-node", "8", "--odd", str(ranks // 2)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
            text=True, start_new_session=True,
            preexec_fn=parent_death_signal(signal.SIGTERM))  # noqa: PLW1509
        try:
            assert proc.stdout is not None
            job = str(json.loads(proc.stdout.readline())["job"])
            _wait_many(job, ranks)
            time.sleep(2.0)
            yield job
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _reads_all(ranks: int) -> Callable[[list[dict[str, Any]]], None]:
    def check(lines: list[dict[str, Any]]) -> None:
        if lines[-1]["ranks_read"] != ranks:
            raise RuntimeError(f"read {lines[-1]['ranks_read']} of {ranks}: {lines[-1]}")
    return check


def _row(what: str, walls: list[float], target: float | None = None) -> str:
    med = statistics.median(walls)
    runs = ", ".join(f"{w:.2f}" for w in walls)
    goal = (f"  target {target:.0f} s: {'ok' if med <= target else 'OVER'}"
            if target is not None else "")
    return f"  {what:<46} {med:6.2f} s  (runs: {runs}){goal}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sizes", default="4,16", help="hung torch jobs' rank counts")
    parser.add_argument("--large", default="64,256", help="armed stdlib-only jobs' ranks")
    args = parser.parse_args()
    rows = []
    for nproc in [int(n) for n in args.sizes.split(",") if n]:
        with hung_job(nproc, armed=False) as job:
            walls = timed(job, args.runs, _names_the_skipper(nproc))
        target = FOUND_16_TARGET_S if nproc == 16 else None
        rows.append(_row(f"{nproc} ranks, hung, found (py-spy)", walls, target))
        print(rows[-1], flush=True)
        with hung_job(nproc, armed=True) as job:
            first = timed(job, 1, _names_the_skipper(nproc))
            walls = timed(job, args.runs, _names_the_skipper(nproc))
        rows.append(_row(f"{nproc} ranks, hung, armed: the first (cold)", first))
        rows.append(_row(f"{nproc} ranks, hung, armed", walls))
        print("\n".join(rows[-2:]), flush=True)
    for ranks in [int(n) for n in args.large.split(",") if n]:
        with many_job(ranks) as job:
            first = timed(job, 1, _reads_all(ranks))
            walls = timed(job, args.runs, _reads_all(ranks))
        rows.append(_row(f"{ranks} stdlib ranks, armed: the first", first))
        rows.append(_row(f"{ranks} stdlib ranks, armed", walls, TARGETS_S.get(ranks)))
        print("\n".join(rows[-2:]), flush=True)
    print(f"\nrankdebug diagnose JOB --json, start to last line, median of {args.runs} "
          f"({os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}):")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

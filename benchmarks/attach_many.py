"""Attach many ranks of a found job (issue 34): ``rankdebug attach JOB all`` over 16 ranks of
a job rankdebug did not start, side by side against one at a time.

The job is ``tests/launch/scripts/many_ranks.py launch --nproc 16``, run plainly (stdlib
ranks: each loops in ``time.sleep(0.5)``, a stand-in for a collective). Each run starts a
fresh job (an attached rank would be reported as it listens, not attached again), waits
until every rank is in its loop, and times the whole command, Python's start and the job's
discovery included (what the extension waits for):

    at once          rankdebug attach LAUNCHER all --json     (--parallel: twice the CPUs)
    one at a time    rankdebug attach LAUNCHER all --json --parallel 1
    per rank         one `rankdebug attach LAUNCHER R` per rank, one after another (with
                     --per-call: what a client that asks rank by rank pays)

Modes alternate within a run, so that a load that comes and goes weighs on each alike.
Every process started here ends at the end, on Ctrl-C, and when this script is killed (each
polls its parent).

    python benchmarks/attach_many.py [--ranks 16] [--runs 3] [--per-call]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
JOB_SCRIPT = HERE.parent / "tests" / "launch" / "scripts" / "many_ranks.py"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _stat(pid: int) -> list[bytes] | None:
    try:
        data = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    return data[data.rfind(b")") + 2:].split()


def _ranks_of(launcher: int) -> list[int]:
    out = []
    for name in os.listdir("/proc"):
        fields = _stat(int(name)) if name.isdigit() else None
        if fields is not None and int(fields[1]) == launcher:
            out.append(int(name))
    return out


def _adapters(ranks: list[int]) -> list[int]:
    """The debugpy adapters serving ``ranks`` (wherever they re-parented): each carries
    RANKDEBUG_SUPERVISOR_PID=its rank (``runtime.adapter_wrapper``)."""
    wanted = {f"RANKDEBUG_SUPERVISOR_PID={p}".encode() for p in ranks}
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                env = Path(f"/proc/{name}/environ").read_bytes().split(b"\0")
            except OSError:
                continue
            if wanted.intersection(env):
                out.append(int(name))
    return out


def _cpu(pids: list[int]) -> float:
    """CPU seconds the ranks used so far (user + system), their debugpy adapters'
    included."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids + _adapters(pids):
        fields = _stat(pid)
        if fields is not None:
            total += int(fields[11]) + int(fields[12])
    return total / tick


CPU: dict[str, list[float]] = {}  # mode -> CPU seconds per rank's attach, in the ranks


@contextlib.contextmanager
def found_job(nproc: int) -> Iterator[int]:
    """A plain many_ranks job of ``nproc`` ranks, every rank in its loop; its launcher's
    pid (what ``rankdebug attach`` takes as JOB)."""
    proc = subprocess.Popen([sys.executable, str(JOB_SCRIPT), "launch", "--nproc", str(nproc),
                             "--per-node", str(nproc), "--odd", "-1", "--master-port",
                             str(_free_port())], stdin=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while len(_ranks_of(proc.pid)) < nproc:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the job did not start")
            time.sleep(0.1)
        time.sleep(1.5)  # every rank past its imports
        yield proc.pid
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        time.sleep(0.5)  # its ranks' adapters end with them (they poll their rank)


def _attach(*args: str) -> tuple[float, list[dict[str, object]]]:
    t0 = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "rankdebug", "attach", *args, "--json"],
                         capture_output=True, text=True, timeout=900, check=False)
    took = time.monotonic() - t0
    return took, [json.loads(ln) for ln in out.stdout.splitlines() if ln.startswith("{")]


def at_once(nproc: int, parallel: int | None) -> float:
    with found_job(nproc) as launcher:
        extra = ["--parallel", str(parallel)] if parallel else []
        ranks = _ranks_of(launcher)
        before = _cpu(ranks)
        took, lines = _attach(str(launcher), "all", *extra)
        name = "at once" if parallel is None else "one at a time"
        CPU.setdefault(name, []).append((_cpu(ranks) - before) / nproc)
        done = lines[-1] if lines else {}
        if done.get("event") != "done" or done.get("failed"):
            raise RuntimeError(f"attach failed: {lines[-3:]}")
        if len([ln for ln in lines if ln.get("event") == "listening"]) != nproc:
            raise RuntimeError(f"not every rank listens: {lines}")
        return took


def per_call(nproc: int) -> float:
    with found_job(nproc) as launcher:
        t0 = time.monotonic()
        for rank in range(nproc):
            _, lines = _attach(str(launcher), str(rank))
            if not lines or lines[-1].get("event") != "listening":
                raise RuntimeError(f"rank {rank}: {lines}")
        return time.monotonic() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", type=int, default=16)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--per-call", action="store_true",
                        help="also one `rankdebug attach JOB R` per rank")
    args = parser.parse_args()
    modes = {"at once": lambda: at_once(args.ranks, None),
             "one at a time": lambda: at_once(args.ranks, 1)}
    if args.per_call:
        modes["per rank"] = lambda: per_call(args.ranks)
    times: dict[str, list[float]] = {name: [] for name in modes}
    for i in range(args.runs):
        for name, run in modes.items():
            times[name].append(run())
        print(f"run {i + 1}: " + ", ".join(f"{n} {v[-1]:.2f} s" for n, v in times.items()),
              file=sys.stderr, flush=True)
    print(f"attach {args.ranks} ranks of a found job, {os.cpu_count()} CPUs, "
          f"{args.runs} runs")
    print(f"{'':<14} {'min':>8} {'median':>8} {'max':>8} {'per rank':>9} {'rank CPU':>9}")
    for name, values in times.items():
        cpu = f"{statistics.median(CPU[name]):8.2f}s" if name in CPU else f"{'':>9}"
        print(f"{name:<14} {min(values):7.2f}s {statistics.median(values):7.2f}s "
              f"{max(values):7.2f}s {statistics.median(values) / args.ranks:8.2f}s {cpu}")
    print("(rank CPU: CPU seconds one attach costs inside the rank and its debugpy "
          f"adapter; {args.ranks} of them need at least {args.ranks} x that / "
          f"{os.cpu_count()} CPUs)")
    base = statistics.median(times["at once"])
    for name in list(times)[1:]:
        print(f"at once is {statistics.median(times[name]) / base:.1f}x faster than {name} "
              "(medians)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

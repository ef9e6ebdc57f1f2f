"""Compare Across Ranks: time from asking to the comparison printed, by ``rankdebug eval JOB
all EXPR --json`` (what the VS Code panel runs and waits for), over 8 armed ranks and over
4 chosen ranks paused at a breakpoint.

The job is ``ddp_workload.py`` (a 24-block DDP model on gloo/CPU). Two values: one layer's
weight (64×64) and every parameter flattened into one tensor (~200k elements, a checksum of
the whole model). Each figure is the wall time of the whole command, Python's start
included; "cli start" is ``rankdebug --help``'s, the part no eval can save.

Target (issue 13): ≤ 1 s from request to the panel shown.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench_common import WORKLOAD, DAPClient, _env, line_of, torchrun

EXPRS = {
    "one weight": "model[0].a.weight",
    "whole model": "torch.cat([p.detach().flatten() for p in model.parameters()])",
}


def timed(argv: list[str], ranks: int = 0) -> float:
    t0 = time.monotonic()
    out = subprocess.run(argv, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - t0
    compared = json.loads(out.stdout.splitlines()[-1]) if ranks else {}
    if out.returncode != 0 or (ranks and sum(
            len(g["ranks"]) for g in compared["groups"]) != ranks):
        raise RuntimeError(f"{argv[3:6]}: exit {out.returncode}: {out.stdout[-300:]}"
                           f"{out.stderr[-300:]}")
    return seconds


def measure(job: str, runs: int, nproc: int) -> dict[str, list[float]]:
    got: dict[str, list[float]] = {name: [] for name in EXPRS}
    for _ in range(runs):
        for name, expr in EXPRS.items():
            got[name].append(timed([sys.executable, "-m", "rankdebug", "eval", job, "all",
                                    expr, "--json"], nproc))
    return got


def armed(nproc: int, runs: int) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.Popen(
            [sys.executable, "-m", "rankdebug", "launch", "--json", "--arm", "--",
             *torchrun(nproc)], env=_env(Path(tmp), 100000), stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True)
        assert proc.stdout is not None
        try:
            job = str(json.loads(proc.stdout.readline())["job"])
            deadline = time.monotonic() + 300
            while len(list(Path(tmp).glob("reach-*.txt"))) < nproc:
                if time.monotonic() > deadline:
                    raise RuntimeError("the ranks did not start")
                time.sleep(0.5)
            time.sleep(2)
            return measure(job, runs, nproc)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(60)


def paused(nproc: int, runs: int) -> dict[str, list[float]]:
    line = line_of("# BREAK")
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.Popen(
            [sys.executable, "-m", "rankdebug", "launch", "--json", "--ranks", "all", "--",
             *torchrun(nproc)], env=_env(Path(tmp), 1000), stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True)
        assert proc.stdout is not None
        clients: list[DAPClient] = []
        stopped = threading.Semaphore(0)

        def debug(host: str, port: int) -> None:
            client = DAPClient(host, port)
            clients.append(client)
            client.attach({str(WORKLOAD): [line]}, timeout=600)
            client.stopped(timeout=600)
            stopped.release()

        try:
            job = ""
            started = 0
            for raw in proc.stdout:
                ev = json.loads(raw)
                job = str(ev.get("job", job))
                if ev.get("event") == "listening":
                    threading.Thread(target=debug, args=(ev["host"], int(ev["port"])),
                                     daemon=True).start()
                    started += 1
                    if started == nproc:
                        break
            for _ in range(nproc):
                if not stopped.acquire(timeout=300):
                    raise RuntimeError("the ranks did not stop")
            return measure(job, runs, nproc)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(60)
            for c in clients:
                c.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    start = sorted(timed([sys.executable, "-m", "rankdebug", "--help"])
                   for _ in range(args.runs))
    rows = [("cli start", start)]
    for label, got in (("8 armed", armed(8, args.runs)), ("4 paused", paused(4, args.runs))):
        rows += [(f"{label}: {name}", sorted(values)) for name, values in got.items()]
    print(f"{'rankdebug eval JOB all EXPR':<28} {'min':>8} {'median':>8} {'max':>8}")
    for name, values in rows:
        mid = values[len(values) // 2]
        print(f"{name:<28} {values[0] * 1000:6.0f}ms {mid * 1000:6.0f}ms "
              f"{values[-1] * 1000:6.0f}ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

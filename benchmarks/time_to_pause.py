"""Time from start until the chosen ranks are stopped at a breakpoint in the training loop,
over the time a plain run takes to reach the same line (the floor).

A 4-rank DDP job on gloo/CPU (``ddp_workload.py``). Variants, run interleaved, median of
``--runs`` runs each, printed side by side:

    plain            the job as written; time until rank 1 / every rank reaches the line
    dap    rank 1    rankdebug launch --ranks 1: the default; a DAP client attaches to the
                     printed port and sets the breakpoint over DAP (the gate, no tracer)
    dap    all       rankdebug launch --ranks all --stop alone (each rank to its breakpoint)
    break  rank 1    the same with --break FILE:LINE too
    break  all
    start  rank 1    --attach start (debugpy listens before the script runs: the escape hatch)
    start  all

Every variant's client sends the breakpoint over DAP. Targets (issue 11): one chosen rank
<= 1.15x, all ranks <= 1.30x. The VS Code path (quick-pick answer to "paused" in the Call
Stack) is measured by the end-to-end suite, against a plain run of the same job.
"""

from __future__ import annotations

import argparse
import sys

from bench_common import WORKLOAD, line_of, median, run_debug, run_plain

NPROC = 4


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true",
                        help="3 runs, the default (dap) and plain only")
    args = parser.parse_args()
    runs = 3 if args.quick else args.runs
    line = line_of("# BREAK")
    brk = f"{WORKLOAD}:{line}"
    variants = {
        "dap rank 1": (["--ranks", "1"], 1),
        # --stop alone: each rank's own way to its breakpoint (together, the first stop
        # pauses the rest where they are: benchmarks/stop_together.py times that).
        "dap all": (["--ranks", "all", "--stop", "alone"], NPROC),
        "break rank 1": (["--ranks", "1", "--break", brk], 1),
        "break all": (["--ranks", "all", "--stop", "alone", "--break", brk], NPROC),
        "start rank 1": (["--ranks", "1", "--attach", "start"], 1),
        "start all": (["--ranks", "all", "--stop", "alone", "--attach", "start"], NPROC),
    }
    if args.quick:
        variants = {k: v for k, v in variants.items() if k.startswith("dap")}
    plain1: list[float] = []
    plain_all: list[float] = []
    got: dict[str, list[float]] = {k: [] for k in variants}
    for i in range(runs):
        p = run_plain(NPROC, 3, until_reached=True)
        plain1.append(p.reached[1])
        plain_all.append(max(p.reached.values()))
        for name, (launch_args, expect) in variants.items():
            r = run_debug(NPROC, 3, launch_args, [line], until_stopped=True, expect=expect)
            if len(r.stopped) < expect:
                print(f"  {name}: only {sorted(r.stopped)} stopped", file=sys.stderr)
                continue
            got[name].append(max(r.stopped.values()))
        print(f"run {i + 1}/{runs}: plain rank1 {plain1[-1]:.2f}s all {plain_all[-1]:.2f}s  "
              + "  ".join(f"{k} {v[-1]:.2f}s" for k, v in got.items() if v), file=sys.stderr)
    floor1, floor_all = median(plain1), median(plain_all)
    print(f"time to pause, {NPROC}-rank DDP on gloo/CPU, median of {runs} interleaved runs")
    print(f"{'variant':<14} {'seconds':>8} {'floor':>7} {'ratio':>6}")
    print(f"{'plain rank 1':<14} {floor1:8.2f} {floor1:7.2f} {1.0:6.2f}")
    print(f"{'plain all':<14} {floor_all:8.2f} {floor_all:7.2f} {1.0:6.2f}")
    for name, values in got.items():
        floor = floor1 if name.endswith("rank 1") else floor_all
        m = median(values)
        print(f"{name:<14} {m:8.2f} {floor:7.2f} {m / floor:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

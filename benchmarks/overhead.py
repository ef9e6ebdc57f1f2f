"""Step time under ``rankdebug launch`` over a plain run's, per rank kind.

A 2-rank DDP job on gloo/CPU (``ddp_workload.py``); each rank measures the CPU time of its
own forward and backward per step (collectives excluded, so a slower peer does not count;
CPU time, so other load on a shared machine does not either). Variants, run
interleaved, median step time (after warm-up) of the median of ``--runs`` runs:

    plain                 the job as written
    unchosen (start)      rank 0 while rank 1 is debugged (rankdebug launch --ranks 1)
    chosen (start)        rank 1, debugger attached, a breakpoint set but never hit
    chosen (hit)          rank 1 with --attach hit, the same breakpoint: no tracer until a hit
    armed                 both ranks of ``rankdebug launch --arm`` (handler armed, never asked)

Targets: unchosen <= 1.02; chosen: report (today's way is about 1.15) (issue 3);
armed <= 1.01 (issue 6).
"""

from __future__ import annotations

import argparse
import sys

from bench_common import WORKLOAD, line_of, median, run_debug, run_plain

NPROC = 2
WARMUP = 5


def _step(res_steps: list[float]) -> float:
    return median(res_steps[WARMUP:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--quick", action="store_true", help="3 runs of 40 steps")
    parser.add_argument("--only", choices=("debug", "armed"),
                        help="plain and only these variants (more runs in the same time)")
    args = parser.parse_args()
    runs, steps = (3, 40) if args.quick else (args.runs, args.steps)
    never = line_of("# NEVER")
    brk = f"{WORKLOAD}:{never}"
    rows: dict[str, list[float]] = {"plain": [], "unchosen (start)": [], "chosen (start)": [],
                                    "chosen (hit)": [], "armed": []}
    for i in range(runs):
        p = run_plain(NPROC, steps, until_reached=False)
        rows["plain"].append(median([_step(p.steps[r]) for r in p.steps]))
        if args.only != "armed":
            s = run_debug(NPROC, steps, ["--ranks", "1"], [never], until_stopped=False,
                          expect=1)
            rows["unchosen (start)"].append(_step(s.steps[0]))
            rows["chosen (start)"].append(_step(s.steps[1]))
            h = run_debug(NPROC, steps, ["--ranks", "1", "--attach", "hit", "--break", brk],
                          [never], until_stopped=False, expect=1)
            rows["chosen (hit)"].append(_step(h.steps[1]))
        if args.only != "debug":
            a = run_debug(NPROC, steps, ["--arm"], [], until_stopped=False, expect=0)
            rows["armed"].append(median([_step(a.steps[r]) for r in a.steps]))
        print(f"run {i + 1}/{runs}: " + "  ".join(f"{k} {v[-1] * 1e3:.2f}ms"
                                               for k, v in rows.items() if v), file=sys.stderr)
    base = median(rows["plain"])
    print(f"step time, {NPROC}-rank DDP on gloo/CPU, Python {sys.version.split()[0]}, "
          f"median of {runs} interleaved runs x {steps - WARMUP} steps")
    print(f"{'variant':<18} {'ms/step':>8} {'ratio':>6}")
    for name, values in rows.items():
        if not values:
            continue
        m = median(values)
        print(f"{name:<18} {m * 1e3:8.2f} {m / base:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

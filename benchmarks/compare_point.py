"""Compare at one point: how often a compare of a weight on a training DDP job shows a
difference that is only the ranks being read a step apart, read at one optimizer step (the
default) and as each rank answers (``--now``, how every compare read before), and what the
wait for the step costs. The job is ``tests/jobs/scripts/ddp_train.py`` (2 ranks, gloo/CPU,
a small DDP model whose weights are equal on every rank after each step and change every
step; rank 1 lags a few milliseconds), armed.

    python benchmarks/compare_point.py [--compares 100]

Target (issue 30): 0 phantom groups in 100 compares at one point.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
JOB = ROOT / "tests" / "jobs" / "scripts" / "ddp_train.py"
BIN = Path(sys.executable).parent


def _compare(job: str, *extra: str) -> tuple[int, float, bool]:
    """(groups, seconds, warned) of one ``rankdebug eval JOB all W --json``."""
    t0 = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "rankdebug", "eval", job, "all",
                          "model[0].weight", "--json", *extra], capture_output=True,
                         text=True, timeout=120, check=True)
    seconds = time.monotonic() - t0
    compare = json.loads(out.stdout.splitlines()[-1])
    return len(compare["groups"]), seconds, "warning" in compare


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--compares", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as marker:
        env = dict(os.environ, MARKER_DIR=marker, OMP_NUM_THREADS="1",
                   PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
        launch = subprocess.Popen(
            [sys.executable, "-m", "rankdebug", "launch", "--json", "--arm", "--",
             str(BIN / "torchrun"), "--standalone", "--nproc_per_node", "2", str(JOB)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)
        try:
            assert launch.stdout is not None
            job = json.loads(launch.stdout.readline())["job"]
            while not all((Path(marker) / f"steps-{r}").exists() for r in (0, 1)):
                time.sleep(0.2)
            for label, extra in (("at one optimizer step", ()), ("--now", ("--now",))):
                rows = [_compare(job, *extra) for _ in range(args.compares)]
                phantom = sum(groups > 1 for groups, _, _ in rows)
                warned = sum(w for _, _, w in rows if w)
                print(f"{label:>22}: {phantom} phantom groups in {args.compares} compares "
                      f"({warned} warned); per compare median "
                      f"{statistics.median(s for _, s, _ in rows) * 1000:.0f} ms")
            (Path(marker) / "stop").write_text("")
            launch.wait(60)
        finally:
            if launch.poll() is None:
                launch.terminate()
                launch.wait(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The hang watch (``rankdebug launch --hang-seconds S``): how soon it says a hang, and
what it costs a healthy job.

- notice: a 3-rank gloo job whose last rank stalls (``tests/launch/scripts/hang_watch_job.py``
  stall); the seconds from the stall (its marker) to the ``hang`` event, less S, per run;
  for an armed job (every rank counts its collectives) and one where only rank 0 has a
  handler (the stalled rank is read by py-spy). Target: <= 5 s.
- cost: a 2-rank healthy job (``hang_workload.py``: a matmul and an all_reduce a step) under
  ``rankdebug launch --arm``, with the watch off (``--hang-seconds 0``) and on, at S = 5
  (read every 0.5 s, the most often) and at the default 120 (every 2 s); median step wall
  time, runs interleaved; the ratio to off.

    python benchmarks/hang_watch.py [--runs N] [--hang S] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
STALL_JOB = HERE.parent / "tests" / "launch" / "scripts" / "hang_watch_job.py"
WORKLOAD = HERE / "hang_workload.py"
BIN = Path(sys.executable).parent
S = 5


def _env(out: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ, MARKER_DIR=str(out), BENCH_OUT=str(out), OMP_NUM_THREADS="1",
               **extra)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


def _launch(flags: list[str], nproc: int, script: Path, out: Path,
            **extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "rankdebug", "launch", "--json", *flags, "--",
         str(BIN / "torchrun"), "--nproc_per_node", str(nproc), str(script)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=_env(out, **extra),
        cwd=out)


def notice(flags: list[str], hang: float = S) -> float | None:
    """Seconds from the stall to the hang event, less ``hang`` (None: no event)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        proc = _launch([*flags, "--hang-seconds", f"{hang:g}"], 3, STALL_JOB, out,
                       SCENARIO="stall")
        got: list[float] = []

        def read() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                if json.loads(line).get("event") == "hang":
                    got.append(time.time())
                    return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(hang + 90)
        stalled = out / "stalled"
        (out / "go").touch()
        (out / "stop").touch()
        proc.terminate()
        proc.wait(30)
        if not got or not stalled.exists():
            return None
        return got[0] - stalled.stat().st_mtime - hang


def step_time(hang: str, seconds: float) -> tuple[float, int]:
    """Median step wall time (both ranks') of the healthy job under --arm, and the hang
    events it got (none expected)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        proc = _launch(["--arm", "--hang-seconds", hang], 2, WORKLOAD, out,
                       BENCH_SECONDS=str(seconds))
        said, _ = proc.communicate(timeout=seconds + 120)
        steps = [float(x) for f in out.glob("steps-*.txt") for x in f.read_text().split()]
        if not steps:
            raise SystemExit(f"the healthy job wrote no steps (--hang-seconds {hang})")
        hangs = sum(1 for line in said.splitlines() if '"event": "hang"' in line)
        return statistics.median(steps), hangs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=12.0,
                        help="how long each healthy run steps (default %(default)s)")
    parser.add_argument("--hang", type=float, default=S,
                        help="S of the notice runs (default %(default)s; from 20 on, progress "
                             "is read every 2 s)")
    parser.add_argument("--quick", action="store_true", help="2 runs of 8 s")
    args = parser.parse_args()
    runs, seconds = (2, 8.0) if args.quick else (args.runs, args.seconds)

    print(f"notice (S = {args.hang:g} s): seconds from the stall to the hang event, beyond S")
    for name, flags in (("armed", ["--arm"]), ("rank 0 only (py-spy)",
                                               ["--ranks", "0", "--no-wait"])):
        late = [notice(flags, args.hang) for _ in range(runs)]
        shown = ", ".join("none" if x is None else f"{x:.1f}" for x in late)
        print(f"  {name:22} {shown}")

    print(f"cost: median step wall time of a healthy 2-rank job ({seconds:g} s a run)")
    rows: dict[str, list[float]] = {"0": [], str(S): [], "120": []}
    alarms = 0
    order = list(rows)
    for i in range(runs):
        for hang in order[i % 3:] + order[:i % 3]:  # interleaved, rotated: load drifts
            step, hangs = step_time(hang, seconds)
            rows[hang].append(step)
            alarms += hangs
    off = statistics.median(rows["0"])
    for hang, got in rows.items():
        med = statistics.median(got)
        label = "off" if hang == "0" else f"S = {hang} s"
        print(f"  {label:12} {med * 1000:7.3f} ms  x{med / off:.3f}  "
              f"(runs: {', '.join(f'{g * 1000:.3f}' for g in got)})")
    print(f"  hang events in these healthy runs: {alarms}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

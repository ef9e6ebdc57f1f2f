"""Time to pause on interpreters without a torch wheel on this machine: one rank of a pure
Python job (``pure_workload.py``: heavy imports, a call-heavy build), debugged with rankdebug
(the default: untraced behind the gate, breakpoint sent over DAP) and with ``--attach
start`` (traced from the start), over a plain run reaching the same line. Run interleaved;
median of ``--runs``.

    python benchmarks/time_to_pause_pure.py --python ~/.pyenv/versions/3.12.1/bin/python

On 3.12+ debugpy traces with sys.monitoring (PEP 669) and costs little; before, with
sys.settrace.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_common import launch_one, median

HERE = Path(__file__).resolve().parent
WORKLOAD = HERE / "pure_workload.py"


def _line() -> int:
    for n, text in enumerate(WORKLOAD.read_text().splitlines(), 1):
        if "# BREAK" in text:
            return n
    raise LookupError("# BREAK")


def plain(python: str) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        mark = Path(tmp, "mark")
        t0 = time.monotonic()
        proc = subprocess.Popen([python, str(WORKLOAD)], env=dict(os.environ, PURE_MARK=str(mark)),
                                stdout=subprocess.DEVNULL)
        while not mark.exists():
            time.sleep(0.005)
        took = time.monotonic() - t0
        proc.wait()
    return took


def debugged(python: str, mode: list[str]) -> float:
    t0 = time.monotonic()
    proc, client = launch_one(["--ranks", "0", *mode, "--", python, str(WORKLOAD)])
    try:
        client.attach({str(WORKLOAD): [_line()]}, exceptions=["uncaught"])
        stopped = client.stopped(timeout=120)
        took = time.monotonic() - t0
        client.request("setBreakpoints", {"source": {"path": str(WORKLOAD)}, "breakpoints": []})
        client.cont(stopped["threadId"])
        client.close()
        return took
    finally:
        proc.wait(60)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default=sys.executable, help="the rank's interpreter")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    version = subprocess.run([args.python, "-c", "import sys; print(sys.version.split()[0])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    got: dict[str, list[float]] = {"plain": [], "rankdebug (default)": [], "--attach start": []}
    for i in range(args.runs):
        got["plain"].append(plain(args.python))
        got["rankdebug (default)"].append(debugged(args.python, []))
        got["--attach start"].append(debugged(args.python, ["--attach", "start"]))
        print(f"run {i + 1}/{args.runs}: " + "  ".join(f"{k} {v[-1]:.2f}s" for k, v in got.items()),
              file=sys.stderr)
    floor = median(got["plain"])
    print(f"time to pause, one rank of a pure Python job, Python {version}, "
          f"median of {args.runs} interleaved runs")
    print(f"{'variant':<22} {'seconds':>8} {'ratio':>6}")
    for name, values in got.items():
        print(f"{name:<22} {median(values):8.2f} {median(values) / floor:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

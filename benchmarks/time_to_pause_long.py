"""Time to the first stop on a job that builds its data and model first (~15-20 s to its
line, ``long_workload.py``), the editor's way, over a plain run of the same job.

Variants, run interleaved, median of ``--runs`` each:

    plain      torchrun as written; time until rank 1 reaches the marked line
    editor     what the extension does at the quick-pick's Enter: a ``rankdebug launch``
               started ahead (RANKDEBUG_WARM) is told the launch, with the breakpoint sent
               along (RANKDEBUG_PRESET); a DAP client attaches to rank 1's port when it
               listens and sets the same breakpoint; time until it is told ``stopped``
    cold       ``rankdebug launch`` started at Enter, the client's breakpoints awaited
               (what the editor did before)

Target (issue 36): editor <= 1.05x plain. Prints the load average beside the numbers.

    python benchmarks/time_to_pause_long.py [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench_common import BIN, DAPClient, median

WORKLOAD = Path(__file__).resolve().parent / "long_workload.py"
LINE = next(n for n, t in enumerate(WORKLOAD.read_text().splitlines(), 1) if "# BREAK" in t)


def _env(out: str) -> dict[str, str]:
    env = dict(os.environ, BENCH_OUT=out, OMP_NUM_THREADS="1")
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


def _job() -> list[str]:
    return [str(BIN / "torchrun"), "--nproc_per_node", "2", str(WORKLOAD)]


def plain() -> float:
    with tempfile.TemporaryDirectory() as out:
        start = time.time()
        proc = subprocess.Popen(_job(), env=_env(out), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        reach = Path(out) / "reach-1.txt"
        while not reach.exists():
            if proc.poll() is not None:
                raise RuntimeError("the plain run ended before its line")
            time.sleep(0.01)
        took = float(reach.read_text()) - start
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait()
    return took


def _attach(ev: dict[str, Any], stopped: list[float], start: float) -> None:
    client = DAPClient(str(ev["host"]), int(ev["port"]), timeout=600)
    try:
        client.attach({str(WORKLOAD): [LINE]}, timeout=600, exceptions=["uncaught"])
        client.stopped(timeout=600)
        stopped.append(time.time() - start)
    finally:
        client.close()


def debug(editor: bool) -> float:
    """Seconds from Enter to rank 1 stopped at the line."""
    launch = [sys.executable, "-m", "rankdebug", "launch"]
    args = ["--json", "--ranks", "1", "--", *_job()]
    with tempfile.TemporaryDirectory() as out:
        env = _env(out)
        if editor:  # started ahead, while the ranks are picked
            r, w = os.pipe()
            proc = subprocess.Popen(launch, env={**env, "RANKDEBUG_WARM": str(r)},
                                    pass_fds=(r,), stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, text=True)
            os.close(r)
            time.sleep(3)
            start = time.time()
            preset = {"breakpoints": [{"source": {"path": str(WORKLOAD)},
                                       "breakpoints": [{"line": LINE}]}],
                      "exceptionFilters": ["uncaught"]}
            os.write(w, json.dumps({"argv": ["launch", *args], "cwd": os.getcwd(),
                                    "env": {**env, "RANKDEBUG_PRESET": json.dumps(preset)}
                                    }).encode())
            os.close(w)
        else:
            start = time.time()
            proc = subprocess.Popen([*launch, *args], env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        stopped: list[float] = []
        assert proc.stdout is not None
        for line in proc.stdout:
            ev = json.loads(line)
            if ev.get("event") == "listening":
                threading.Thread(target=_attach, args=(ev, stopped, start), daemon=True).start()
            if ev.get("event") == "attached":  # the stop follows: wait for it, then end
                while not stopped and proc.poll() is None:
                    time.sleep(0.01)
                proc.send_signal(signal.SIGTERM)
        proc.wait()
        if not stopped:
            raise RuntimeError("rank 1 never stopped")
    return stopped[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    times: dict[str, list[float]] = {"plain": [], "editor": [], "cold": []}
    for _ in range(args.runs):
        times["plain"].append(plain())
        times["editor"].append(debug(editor=True))
        times["cold"].append(debug(editor=False))
    base = median(times["plain"])
    for name, values in times.items():
        print(f"{name:7} {median(values):6.2f} s  {median(values) / base:5.2f}x  "
              f"({', '.join(f'{v:.2f}' for v in values)})")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""How long does finding jobs take on a busy machine? A scan of ~2,000 processes.

Starts ``--procs`` cheap sleeping processes (``sleep``) plus ``--ranks`` Python processes
that look like ranks of two jobs (RANK/WORLD_SIZE/MASTER_ADDR:MASTER_PORT set), then times
the ``/proc`` scan (``scan_processes``) and the whole discovery (``discover``: the scan, the
registry, grouping, no nvidia-smi), median and worst of ``--runs`` runs, and ends every
process it started. The goal: under 100 ms for 2,000 processes.

    python benchmarks/jobs_scan.py [--procs 2000] [--ranks 8] [--runs 20]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time

from rankdebug.jobs.discover import discover
from rankdebug.jobs.proc_scan import scan_processes
from rankdebug.jobs.procfs import pids


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--procs", type=int, default=2000, help="processes in /proc, about")
    parser.add_argument("--ranks", type=int, default=8, help="fake ranks among them")
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()

    started: list[subprocess.Popen[bytes]] = []
    try:
        for i in range(args.ranks):
            job, rank = divmod(i, max(1, args.ranks // 2))
            env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank),
                       WORLD_SIZE=str(max(1, args.ranks // 2)), MASTER_ADDR="127.0.0.1",
                       MASTER_PORT=str(29000 + job))
            started.append(subprocess.Popen(
                [sys.executable, "-c", "import time; time.sleep(3600)"], env=env))
        missing = args.procs - len(pids())
        for _ in range(max(0, missing)):
            started.append(subprocess.Popen(["sleep", "3600"], stdin=subprocess.DEVNULL))
        time.sleep(1.0)  # let the Python ones get past their start
        total = len(pids())

        scans, full = [], []
        found = None
        for _ in range(args.runs):
            t0 = time.perf_counter()
            scan = scan_processes()
            scans.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            found = discover(gpus=False)
            full.append((time.perf_counter() - t0) * 1000)
        assert found is not None
        ours = {p.pid for p in started}
        fake = sum(1 for j in found.jobs for r in j.ranks if r.pid in ours)
        result = {
            "processes": total,
            "rank_processes_found": fake,
            "jobs_found": len(found.jobs),
            "scan_ms_median": round(statistics.median(scans), 2),
            "scan_ms_max": round(max(scans), 2),
            "discover_ms_median": round(statistics.median(full), 2),
            "discover_ms_max": round(max(full), 2),
            "load_average": os.getloadavg()[0],
        }
        print(f"{total} processes, {fake}/{args.ranks} fake ranks found in "
              f"{len(scan.ranks)} candidates")
        print(f"scan     median {result['scan_ms_median']:7.2f} ms   "
              f"max {result['scan_ms_max']:7.2f} ms")
        print(f"discover median {result['discover_ms_median']:7.2f} ms   "
              f"max {result['discover_ms_max']:7.2f} ms   (goal: < 100 ms)")
        print(json.dumps(result))
        return 0 if result["discover_ms_median"] < 100 else 1
    finally:
        for proc in started:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        for proc in started:
            proc.wait()


if __name__ == "__main__":
    raise SystemExit(main())

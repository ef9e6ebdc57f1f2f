"""Stop together: how long after one chosen rank stops every other chosen rank is shown
paused, and how long Continue All takes to set them all running.

A 4-rank DDP job on gloo/CPU (``ddp_workload.py``) under ``rankdebug launch --ranks all``
(default settings: ``--stop together``); a DAP client per rank (what VS Code's child
sessions are) with a breakpoint on a line only rank 0 reaches (step 2). The other ranks are
by then in Python or blocked in the gradients' all_reduce, which rank 0 has not joined: those
are shown paused from their stack read from outside (``waiting in all_reduce``).

    stop together    rank 0's client gets "stopped" → the last other client gets "stopped"
    continue all     the command on the job's ctl.sock → every client got "continued"

Target (issue 12): every chosen rank shown paused within 1 s of the first stop.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench_common import WORKLOAD, DAPClient, _env, line_of, torchrun

NPROC = 4


def one_run() -> tuple[float, float, list[str]]:
    line = line_of("# RANK0")
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.Popen(
            [sys.executable, "-m", "rankdebug", "launch", "--json", "--ranks", "all", "--",
             *torchrun(NPROC)],
            env=_env(Path(tmp), 1000), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True)
        assert proc.stdout is not None
        clients: dict[int, DAPClient] = {}
        stopped: dict[int, float] = {}
        reasons: list[str] = []
        lock = threading.Condition()
        job_dir = ""

        def debug(rank: int, host: str, port: int) -> None:
            client = DAPClient(host, port)
            clients[rank] = client
            client.attach({str(WORKLOAD): [line]}, timeout=600)
            body = client.stopped(timeout=600)
            with lock:
                stopped[rank] = time.monotonic()
                reasons.append(f"{rank}:{body.get('description') or body['reason']}")
                lock.notify_all()

        try:
            for raw in proc.stdout:
                ev = json.loads(raw)
                if ev.get("event") == "job":
                    job_dir = str(ev["dir"])
                if ev.get("event") == "listening":
                    threading.Thread(target=debug, args=(int(ev["rank"]), ev["host"],
                                                         int(ev["port"])), daemon=True).start()
                    if len(clients) == NPROC - 1:
                        break
            with lock:
                lock.wait_for(lambda: len(stopped) == NPROC, timeout=300)
            first = stopped[0]
            together = max(stopped.values()) - first
            marks = {r: len(c.events) for r, c in clients.items()}
            t0 = time.monotonic()
            with socket.socket(socket.AF_UNIX) as sock:
                sock.connect(os.path.join(job_dir, "ctl.sock"))
                sock.sendall(b'{"command": "continue"}\n')
                sock.recv(4096)
            for rank, client in clients.items():
                client.wait_event("continued", 60, after=marks[rank])
            cont = time.monotonic() - t0
            return together, cont, sorted(reasons)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(60)
            for c in clients.values():
                c.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    together: list[float] = []
    cont: list[float] = []
    for i in range(args.runs):
        t, c, reasons = one_run()
        together.append(t)
        cont.append(c)
        print(f"run {i + 1}: stop together {t * 1000:.0f} ms, continue all {c * 1000:.0f} ms "
              f"({', '.join(reasons)})", file=sys.stderr)
    together.sort()
    cont.sort()
    mid = len(together) // 2
    print(f"{'4 ranks':<12} {'min':>8} {'median':>8} {'max':>8}")
    for name, values in (("stop together", together), ("continue all", cont)):
        print(f"{name:<14} {values[0] * 1000:6.0f}ms {values[mid] * 1000:6.0f}ms "
              f"{values[-1] * 1000:6.0f}ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Group commands at scale (issue 34): stop together, continue all and step all with 16, 32
and 64 chosen ranks, and how much of it is debugpy's own start in each rank.

The job: ``tests/launch/scripts/many_ranks.py`` (stdlib ranks, no torch; each loops in
``train_step → wait_for_peers → time.sleep(0.5)``, a stand-in for a collective) under
``rankdebug launch --json --ranks all`` (the default ``--attach hit``: a rank runs untraced
until it needs its debugger). One DAP client per rank on its gate (what VS Code's child
sessions, or the extension's links beyond the session cap, are), a breakpoint in
``load_batch``, which only rank 0 runs (``--odd 0``). Group commands go over the job's
``ctl.sock``, as the extension sends them.

    stop together, shown  rank 0's client gets "stopped" → the last client gets one (a rank
                          not stopped within 1 s is read from outside and shown paused by
                          its gate, ``supervise.gates.waiting``)
    stop together, real   rank 0's "stopped" → the last rank stopped in debugpy itself
    (cold)                each other rank first starts debugpy (it ran untraced)
    (warm)                after continue all, rank 0 hits its breakpoint again: debugpy is
                          in every rank by then
    continue all          {"command": "continue"} → every client got "continued"
    step all              {"command": "step", "kind": "over"} → every client got its next
                          "stopped" (a rank paused in its 0.5 s sleep steps once it returns)

debugpy's own start: N processes at once, each timing ``import debugpy`` +
``debugpy.listen`` (its adapter spawned and listening), what each paused rank does on its
first stop; the median per rank and the wall time of all N on this machine's CPUs.

Every process started here ends at the end, on Ctrl-C, and when this script is killed.

    python benchmarks/group_scale.py [--sizes 16,32,64] [--runs 1]
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
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
from dap_client import DAPClient  # noqa: E402
from rankdebug.supervise.procs import parent_death_signal  # noqa: E402

JOB_SCRIPT = HERE.parent / "tests" / "launch" / "scripts" / "many_ranks.py"
WAIT_S = 240.0


def _break_line() -> int:
    lines = JOB_SCRIPT.read_text().splitlines()
    return next(n for n, t in enumerate(lines, 1) if t.startswith("def load_batch")) + 1


def _ctl(job_dir: str, command: dict[str, Any]) -> dict[str, Any]:
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(WAIT_S)
        sock.connect(os.path.join(job_dir, "ctl.sock"))
        sock.sendall(json.dumps(command).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    answer: dict[str, Any] = json.loads(data)
    if "error" in answer:
        raise RuntimeError(f"{command}: {answer['error']}")
    return answer


class Job:
    """``rankdebug launch --json --ranks all`` of ``nproc`` stdlib ranks, a client on each
    rank's gate."""

    def __init__(self, nproc: int, tmp: Path) -> None:
        self.nproc = nproc
        launcher = tmp / "many-ranks"
        launcher.write_text(f"#!/bin/sh\nexec {sys.executable} {JOB_SCRIPT} launch \"$@\"\n")
        launcher.chmod(0o700)
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "rankdebug", "launch", "--json", "--ranks", "all", "--",
             str(launcher), "--nproc", str(nproc), "--per-node", str(nproc), "--odd", "0"],
            cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            start_new_session=True,
            preexec_fn=parent_death_signal(signal.SIGTERM))  # noqa: PLW1509
        self.dir = ""
        self.listening: dict[int, float] = {}  # rank -> seconds from the launch
        self.clients: dict[int, DAPClient] = {}
        endpoints: dict[int, tuple[str, int]] = {}
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            with contextlib.suppress(ValueError):
                ev = json.loads(raw)
                if ev.get("event") == "job":
                    self.dir = str(ev["dir"])
                elif ev.get("event") == "listening":
                    endpoints[int(ev["rank"])] = (str(ev["host"]), int(ev["port"]))
                    self.listening[int(ev["rank"])] = time.monotonic() - self.t0
                if len(endpoints) == nproc and self.dir:
                    break
        if len(endpoints) != nproc:
            raise RuntimeError(f"{len(endpoints)} of {nproc} ranks listen")
        # Drain the rest of its stdout (a full pipe would block the job).
        threading.Thread(target=lambda: [None for _ in self.proc.stdout or []],
                         daemon=True).start()
        line = _break_line()

        def attach(rank: int) -> None:
            client = DAPClient(*endpoints[rank], timeout=WAIT_S)
            self.clients[rank] = client
            client.attach({str(JOB_SCRIPT): [line]}, timeout=WAIT_S)

        threads = [threading.Thread(target=attach, args=(r,)) for r in endpoints]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if len(self.clients) != nproc:
            raise RuntimeError("a client did not attach")

    def marks(self) -> dict[int, int]:
        return {r: len(c.events) for r, c in self.clients.items()}

    def wait_all(self, event: str, marks: dict[int, int], real: bool = False
                 ) -> dict[int, float]:
        """When each client got ``event`` after ``marks`` (monotonic time); ``real``: a
        stop of debugpy's own, not one the gate shows for a rank read from outside."""
        got: dict[int, float] = {}
        deadline = time.monotonic() + WAIT_S
        while len(got) < self.nproc and time.monotonic() < deadline:
            now = time.monotonic()
            for rank, client in self.clients.items():
                if rank not in got and any(_is(e, event, real)
                                           for e in client.events[marks[rank]:]):
                    got[rank] = now
            time.sleep(0.01)
        if len(got) != self.nproc:
            raise RuntimeError(f"{len(got)} of {self.nproc} clients got {event!r}")
        return got

    def stop_together(self, marks: dict[int, int]) -> tuple[float, float]:
        """(every client shows a stop, every rank stopped in debugpy), in seconds after
        rank 0 stopped."""
        shown = self.wait_all("stopped", marks)
        real = self.wait_all("stopped", marks, real=True)
        return max(shown.values()) - shown[0], max(real.values()) - shown[0]

    def command(self, command: dict[str, Any], event: str) -> float:
        marks = self.marks()
        t0 = time.monotonic()
        _ctl(self.dir, command)
        got = self.wait_all(event, marks, real=event == "stopped")
        return max(got.values()) - t0

    def close(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        for c in self.clients.values():
            c.close()


def _is(event: dict[str, Any], name: str, real: bool) -> bool:
    if event.get("event") != name:
        return False
    said = str((event.get("body") or {}).get("description") or "")
    return not (real and said.startswith("Paused: waiting in"))


def one_run(nproc: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        job = Job(nproc, Path(tmp))
        try:
            out = {"launch → all gates listen": max(job.listening.values())}
            marks = job.marks()  # rank 0 hits its breakpoint within 0.5 s
            shown, real = job.stop_together(marks)
            out["stop together, shown (cold)"] = shown
            out["stop together, real (cold)"] = real
            out["continue all"] = job.command({"command": "continue"}, "continued")
            marks = job.marks()
            shown, real = job.stop_together(marks)
            out["stop together, shown (warm)"] = shown
            out["stop together, real (warm)"] = real
            out["step all"] = job.command({"command": "step", "kind": "over"}, "stopped")
            out["continue all (2)"] = job.command({"command": "continue"}, "continued")
            return out
        finally:
            job.close()


DEBUGPY_START = """
import os, sys, time
parent = os.getppid()
while not os.path.exists(sys.argv[1]) and os.getppid() == parent:
    time.sleep(0.005)
t0 = time.perf_counter()
import debugpy
debugpy.listen(("127.0.0.1", 0))
print(time.perf_counter() - t0, flush=True)
while os.getppid() == parent:  # ends with this script, however it ends
    time.sleep(0.2)
"""


def debugpy_start(n: int) -> tuple[float, float]:
    """debugpy's own start in ``n`` processes at once: the median per process, and the wall
    time until the last one listened."""
    with tempfile.TemporaryDirectory() as tmp:
        go = os.path.join(tmp, "go")
        procs = [subprocess.Popen([sys.executable, "-c", DEBUGPY_START, go],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                  start_new_session=True) for _ in range(n)]
        try:
            time.sleep(1.0 + 0.05 * n)  # every interpreter up, waiting for the go
            t0 = time.monotonic()
            Path(go).touch()
            each = []
            for p in procs:
                assert p.stdout is not None
                each.append(float(p.stdout.readline()))
            return statistics.median(each), time.monotonic() - t0
        finally:
            for p in procs:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGKILL)
                p.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="16,32,64")
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rows: dict[int, dict[str, list[float]]] = {}
    starts: dict[int, tuple[float, float]] = {}
    t_all = time.monotonic()
    for n in sizes:
        rows[n] = {}
        for i in range(args.runs):
            got = one_run(n)
            for name, value in got.items():
                rows[n].setdefault(name, []).append(value)
            print(f"{n} ranks, run {i + 1}: "
                  + ", ".join(f"{k} {v:.2f} s" for k, v in got.items()),
                  file=sys.stderr, flush=True)
        starts[n] = debugpy_start(n)
        print(f"{n} debugpy starts at once: median {starts[n][0]:.2f} s each, all "
              f"{starts[n][1]:.2f} s", file=sys.stderr, flush=True)
    print(f"group commands over stdlib ranks, {os.cpu_count()} CPUs, median of {args.runs} "
          f"run(s), {time.monotonic() - t_all:.0f} s in all")
    names = list(rows[sizes[0]])
    print(f"{'':<30}" + "".join(f"{f'{n} ranks':>11}" for n in sizes))
    for name in names:
        print(f"{name:<30}" + "".join(f"{statistics.median(rows[n][name]):10.2f}s"
                                      for n in sizes))
    print(f"{'debugpy start, each':<30}" + "".join(f"{starts[n][0]:10.2f}s" for n in sizes))
    print(f"{'debugpy start, all N':<30}" + "".join(f"{starts[n][1]:10.2f}s" for n in sizes))
    for n in sizes:
        cold = statistics.median(rows[n]["stop together, real (cold)"])
        warm = statistics.median(rows[n]["stop together, real (warm)"])
        bare = starts[n][1]
        print(f"{n} ranks: every rank stopped in debugpy {cold:.2f} s after the first when "
              f"each ran untraced, {warm:.2f} s once debugpy was in each: {cold - warm:.2f} s "
              f"is the ranks' first stop (debugpy's start, the gate handing the session "
              f"over); {n} bare debugpy starts at once take {bare:.2f} s here "
              f"({bare / cold * 100 if cold > 0 else 0:.0f}% of the cold stop)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

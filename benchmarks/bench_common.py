"""Shared by the launch benchmarks: run a job (plain or under ``rankdebug launch``), attach a
DAP client to each rank that listens, and time what matters."""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
from dap_client import DAPClient, DAPError  # noqa: E402

WORKLOAD = HERE / "ddp_workload.py"
BIN = Path(sys.executable).parent


def line_of(tag: str) -> int:
    for n, text in enumerate(WORKLOAD.read_text().splitlines(), 1):
        if tag in text:
            return n
    raise LookupError(tag)


def torchrun(nproc: int) -> list[str]:
    return [str(BIN / "torchrun"), "--nproc_per_node", str(nproc), str(WORKLOAD)]


@dataclass
class Result:
    stopped: dict[int, float] = field(default_factory=dict)  # rank -> seconds from start
    reached: dict[int, float] = field(default_factory=dict)  # plain: rank -> seconds
    steps: dict[int, list[float]] = field(default_factory=dict)
    code: int | None = None


def _env(out: Path, steps: int) -> dict[str, str]:
    env = dict(os.environ, BENCH_OUT=str(out), BENCH_STEPS=str(steps), OMP_NUM_THREADS="1")
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


def _collect(out: Path, res: Result) -> None:
    for f in out.glob("reach-*.txt"):
        res.reached[int(f.stem.split("-")[1])] = float(f.read_text())
    for f in out.glob("steps-*.txt"):
        res.steps[int(f.stem.split("-")[1])] = [float(x) for x in f.read_text().split()]


def run_plain(nproc: int, steps: int, *, until_reached: bool) -> Result:
    """The job as the user would run it; with ``until_reached``, stop it once every rank has
    reached the marked line."""
    res = Result()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        start = time.time()
        proc = subprocess.Popen(torchrun(nproc), env=_env(out, steps),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        while proc.poll() is None:
            if until_reached and len(list(out.glob("reach-*.txt"))) == nproc:
                break
            time.sleep(0.02)
        _collect(out, res)
        res.reached = {r: t - start for r, t in res.reached.items()}
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        res.code = proc.wait()
    return res


def run_debug(nproc: int, steps: int, launch_args: list[str], breakpoints: list[int], *,
              until_stopped: bool, expect: int) -> Result:
    """``rankdebug launch`` the job; attach to each listening rank with ``breakpoints`` set;
    with ``until_stopped``, end the job when ``expect`` ranks have stopped, else continue
    each stop and let the job finish."""
    res = Result()
    lock = threading.Lock()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        start = time.time()
        proc = subprocess.Popen(
            [sys.executable, "-m", "rankdebug", "launch", "--json", *launch_args, "--",
             *torchrun(nproc)],
            env=_env(out, steps), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True,
        )
        clients: list[DAPClient] = []

        def debug(ev: dict[str, Any]) -> None:
            client = DAPClient(ev["host"], ev["port"])
            clients.append(client)
            try:
                # --attach hit, breakpoint never hit: the attach never completes; fine.
                client.attach({str(WORKLOAD): breakpoints}, timeout=600)
            except DAPError:
                return
            if not until_stopped:
                return
            client.stopped(timeout=600)
            with lock:
                res.stopped[int(ev["rank"])] = time.time() - start
                done = len(res.stopped) >= expect
            if done:
                proc.send_signal(signal.SIGTERM)

        threads = []
        assert proc.stdout is not None
        for line in proc.stdout:
            ev = json.loads(line)
            if ev.get("event") == "listening":
                t = threading.Thread(target=debug, args=(ev,), daemon=True)
                t.start()
                threads.append(t)
            elif ev.get("event") == "exited":
                res.code = int(ev["code"])
        proc.wait()
        for c in clients:
            c.close()
        _collect(out, res)
    return res


def launch_one(launch_args: list[str]) -> tuple[subprocess.Popen[bytes], DAPClient]:
    """``rankdebug launch --json LAUNCH_ARGS`` of a job with one chosen rank, and a client
    connected to the port its ``listening`` event names (not attached yet)."""
    proc = subprocess.Popen([sys.executable, "-m", "rankdebug", "launch", "--json",
                             *launch_args], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    for raw in proc.stdout:
        ev = json.loads(raw)
        if ev.get("event") == "listening":
            return proc, DAPClient(str(ev["host"]), int(ev["port"]))
    proc.wait(60)
    raise RuntimeError("no listening event")


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")

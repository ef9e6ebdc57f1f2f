"""Running a plain torchrun job for the running-jobs tests, and ending every process of it."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import wire_check

SCRIPTS = Path(__file__).resolve().parent / "scripts"
JOB_SCRIPT = SCRIPTS / "ranks_job.py"
BIN = Path(sys.executable).parent


def line_of(tag: str, script: Path = JOB_SCRIPT) -> int:
    for n, text in enumerate(script.read_text().splitlines(), 1):
        if tag in text:
            return n
    raise AssertionError(f"{tag} not in {script}")


def rankdebug(*args: str, timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rankdebug", *args], capture_output=True,
                          text=True, timeout=timeout, check=False)


def rankdebug_json(*args: str, timeout: float = 120.0) -> Any:
    out = rankdebug(*args, "--json", timeout=timeout)
    assert out.stdout.strip(), out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    assert wire_check.problem(args[0], lines) is None, lines  # as declared
    return lines[-1]


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            data = Path(f"/proc/{name}/stat").read_bytes()
        except OSError:
            continue
        ppid = int(data[data.rfind(b")") + 2 :].split()[1])
        kids.setdefault(ppid, []).append(int(name))
    return kids


def with_marker(tmp: Path) -> list[int]:
    """Processes whose environment has MARKER_DIR=tmp: the job's, wherever they re-parented
    (debugpy's adapter daemonizes)."""
    needle = f"MARKER_DIR={tmp}".encode()
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            try:
                env = Path(f"/proc/{name}/environ").read_bytes()
            except OSError:
                continue
            if needle in env.split(b"\0"):
                out.append(int(name))
    return out


def descendants(pid: int) -> list[int]:
    kids = _children()
    out, todo = [], list(kids.get(pid, []))
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


class TorchrunJob:
    """``torchrun --standalone --nproc_per_node N ranks_job.py`` started as a user would."""

    def __init__(self, tmp: Path, nproc: int = 4, mode: str = "loop") -> None:
        self.tmp = tmp
        self.nproc = nproc
        env = dict(os.environ, MARKER_DIR=str(tmp), JOB_MODE=mode, OMP_NUM_THREADS="1")
        env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
        for name in list(env):
            if name.startswith("RANKDEBUG_"):
                del env[name]
        self.log = open(tmp / "job.log", "wb")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [str(BIN / "torchrun"), "--standalone", "--nproc_per_node", str(nproc),
             str(JOB_SCRIPT)],
            cwd=SCRIPTS, env=env, stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True)
        self.pids: dict[int, int] = {}

    def wait_ready(self, timeout: float = 90.0) -> dict[int, int]:
        """rank -> pid once every rank has passed its first all_reduce."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = {}
            for rank in range(self.nproc):
                f = self.tmp / f"ready-{rank}"
                if f.exists() and f.read_text().strip():
                    found[rank] = int(f.read_text())
            if len(found) == self.nproc:
                self.pids = found
                return found
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        raise AssertionError(f"job not ready: {self.output()}")

    def steps(self, rank: int) -> int:
        try:
            return int((self.tmp / f"steps-{rank}").read_text() or 0)
        except (OSError, ValueError):
            return 0

    def output(self) -> str:
        with contextlib.suppress(OSError):
            return (self.tmp / "job.log").read_text(errors="replace")[-4000:]
        return ""

    def stop(self) -> None:
        """End the job and every process it started (ranks, adapters we injected)."""
        pids = descendants(self.proc.pid)
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.proc.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=10)
        for pid in [*pids, *self.pids.values(), *with_marker(self.tmp), self.proc.pid]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        self.log.close()

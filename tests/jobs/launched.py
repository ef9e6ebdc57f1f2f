"""``rankdebug launch`` jobs for the running-jobs tests: the launch suite's ``Launch`` (its JSON
events, its end, the processes it leaves behind), and the CLI run as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "launch"))

from launch_helpers import Launch, tool

import wire_check

SCRIPTS = Path(__file__).resolve().parent / "scripts"

__all__ = ["SCRIPTS", "Launch", "cli", "cli_json", "line_of", "start", "steps", "wait_for"]


def line_of(script: str, tag: str) -> int:
    for n, text in enumerate((SCRIPTS / script).read_text().splitlines(), 1):
        if tag in text:
            return n
    raise AssertionError(f"{tag} not in {script}")


def start(tmp: Path, args: list[str], script: str, nproc: int = 2,
          env: dict[str, str] | None = None) -> Launch:
    """``rankdebug launch --json ARGS -- torchrun --nproc_per_node N scripts/SCRIPT``."""
    return Launch([*args, "--", tool("torchrun"), "--standalone", "--nproc_per_node",
                   str(nproc), str(SCRIPTS / script)], tmp, env=env)


def cli(*args: str, timeout: float = 90.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rankdebug", *args], capture_output=True,
                          text=True, timeout=timeout, check=False)


def cli_json(*args: str, timeout: float = 90.0) -> list[Any]:
    """``rankdebug ARGS --json``: every JSON line it printed."""
    out = cli(*args, "--json", timeout=timeout)
    assert out.stdout.strip(), (out.returncode, out.stderr)
    lines = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    assert wire_check.problem(args[0], lines) is None, lines  # as declared
    return lines


def steps(tmp: Path, rank: int) -> int:
    try:
        return int((tmp / f"steps-{rank}").read_text() or 0)
    except (OSError, ValueError):
        return 0


def wait_for(what: str, check: Any, timeout: float = 120.0, launch: Launch | None = None
             ) -> Any:
    """``check()``'s first truthy value, polled every 0.1 s (margins for a busy machine)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        if launch is not None and launch.proc.poll() is not None:
            break
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}"
                         + (f"\n{launch.stderr()}" if launch is not None else ""))

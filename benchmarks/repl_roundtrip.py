"""The terminal debugger (``rankdebug debug``), timed as a person at the prompt sees it.

    python benchmarks/repl_roundtrip.py [--reps 10]

1. ``rankdebug debug --ranks 1 -- torchrun --nproc-per-node 2 gloo_steps.py``: seconds from
   the start to the first prompt, and to the prompt after ``b`` + ``c`` with rank 1 stopped
   at the breakpoint (the ranks wait for the prompt's client before they run, so ``b``
   lands before any line does); against a plain run's time to the same line.
2. ``c`` and ``n`` round trips (command sent → next prompt, every current rank stopped
   again) with 2 and 8 stdlib-only ranks (tests/repl/scripts/steps.py) and with the 2-rank
   gloo job: medians over ``--reps``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = HERE.parent / "tests" / "repl" / "scripts"
BIN = Path(sys.executable).parent
PROMPT = "(rankdebug) "


class Prompt:
    """``rankdebug debug ARGS`` driven one command at a time."""

    def __init__(self, args: list[str]) -> None:
        env = dict(os.environ, OMP_NUM_THREADS="1")
        env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen([sys.executable, "-m", "rankdebug", "debug", *args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, cwd=SCRIPTS, env=env)
        self.buf = b""
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        while True:
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            with self.cond:
                self.buf += chunk
                self.cond.notify_all()
            if not chunk:
                return

    def until_prompt(self, timeout: float = 300.0) -> str:
        """What was printed up to the next prompt."""
        with self.cond:
            if not self.cond.wait_for(lambda: PROMPT.encode() in self.buf, timeout):
                raise RuntimeError(f"no prompt; got {self.buf[-2000:]!r}")
            head, _, self.buf = self.buf.partition(PROMPT.encode())
        return head.decode()

    def do(self, command: str) -> tuple[float, str]:
        """Seconds from sending ``command`` to the next prompt, and what it printed."""
        assert self.proc.stdin is not None
        t = time.monotonic()
        self.proc.stdin.write(command.encode() + b"\n")
        self.proc.stdin.flush()
        out = self.until_prompt()
        return time.monotonic() - t, out

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"q\n")
        self.proc.stdin.close()
        self.proc.wait(120)


def line_of(script: str, tag: str) -> int:
    for n, text in enumerate((SCRIPTS / script).read_text().splitlines(), 1):
        if text.rstrip().endswith(f"# {tag}"):
            return n
    raise LookupError(tag)


GLOO_BREAK = f"gloo_steps.py:{line_of('gloo_steps.py', 'BREAK')}"
STEPS_BREAK = f"steps.py:{line_of('steps.py', 'BREAK')}"


def launcher(tmp: Path) -> str:
    path = tmp / "steps-launcher"
    path.write_text(f"#!/bin/sh\nexec {sys.executable} {SCRIPTS / 'steps.py'} launch \"$@\"\n")
    path.chmod(0o700)
    return str(path)


def plain_to_line() -> float:
    """Seconds for a plain run (no rankdebug) of the same job to bring rank 1 to the line."""
    env = dict(os.environ, OMP_NUM_THREADS="1", STEPS_MARK="1", STEPS_END="3")
    t0 = time.monotonic()
    proc = subprocess.Popen([str(BIN / "torchrun"), "--nproc-per-node", "2", "gloo_steps.py"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=SCRIPTS,
                            env=env, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        if "at-break" in line:
            seconds = time.monotonic() - t0
            break
    else:
        raise RuntimeError("the plain run never reached the line")
    proc.wait(60)
    return seconds


def first_stop() -> None:
    p = Prompt(["--ranks", "1", "--", str(BIN / "torchrun"), "--nproc-per-node", "2",
                "gloo_steps.py"])
    try:
        p.until_prompt()
        prompt = time.monotonic() - p.t0
        p.do(f"b {GLOO_BREAK}")
        _, out = p.do("c")
        stopped = time.monotonic() - p.t0
        assert f"rank 1: stopped (breakpoint) at {GLOO_BREAK}" in out, out
        floor = plain_to_line()
        print(f"torchrun 2 ranks, --ranks 1: first prompt {prompt:.2f} s; rank 1 stopped at "
              f"the breakpoint set with b, prompt back {stopped:.2f} s after the start; a "
              f"plain run reaches the line in {floor:.2f} s ({stopped / floor:.2f}x)")
    finally:
        p.close()


def round_trips(label: str, args: list[str], place: str, reps: int) -> None:
    p = Prompt(args)
    try:
        p.until_prompt()
        p.do(f"b {place}")
        _, out = p.do("c")
        assert "stopped" in out, out
        cs = []
        for _ in range(reps):
            seconds, out = p.do("c")
            assert "stopped" in out and "still running" not in out, out
            cs.append(seconds)
        p.do("clear")
        ns = []
        for _ in range(reps):
            seconds, out = p.do("n")
            assert "stopped" in out, out
            ns.append(seconds)
        print(f"{label}: c median {statistics.median(cs) * 1000:.0f} ms (min "
              f"{min(cs) * 1000:.0f}, max {max(cs) * 1000:.0f}); n median "
              f"{statistics.median(ns) * 1000:.0f} ms (min {min(ns) * 1000:.0f}, max "
              f"{max(ns) * 1000:.0f}); {reps} each")
    finally:
        p.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=10)
    args = parser.parse_args()
    first_stop()
    with tempfile.TemporaryDirectory() as tmp:
        run = launcher(Path(tmp))
        for n in (2, 8):
            round_trips(f"{n} stdlib ranks, all held", ["--ranks", "all", "--", run, str(n)],
                        STEPS_BREAK, args.reps)
    round_trips("torchrun gloo 2 ranks, both held",
                ["--ranks", "0,1", "--", str(BIN / "torchrun"), "--nproc-per-node", "2",
                 "gloo_steps.py"], GLOO_BREAK, args.reps)


if __name__ == "__main__":
    main()

"""How much faster is a smoke run? Each bundled example's full command for its first minute
against its smoke command's whole run, one after the other on this machine (run side by
side they would share the CPU and slow each other).

For the full command: the optimizer steps it reached in the window, the rate after its first
step, and the time the whole run would take at that rate. For the smoke command: its whole
wall time, start-up included. The ratio is the full run's estimate over the smoke run.

    python benchmarks/smoke_speedup.py [--window 60] [--only nanogpt,hf_trainer,deepspeed]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "smoke"
BIN = Path(sys.executable).parent


def _port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


@dataclass(frozen=True)
class Example:
    name: str
    command: list[str]
    # A step's progress line: group 1 is the step number; group 2, when there, the total.
    progress: str
    total: int | None = None  # the full run's steps, when no progress line says it


def examples() -> list[Example]:
    return [
        Example("nanogpt", ["torchrun", "--standalone", "--nproc_per_node", "2", "train.py",
                            "config/char.py"], r"^iter (\d+):", total=5000),
        Example("hf_trainer", ["accelerate", "launch", "--multi_gpu", "--num_processes", "2",
                               "--main_process_port", _port(), "train.py", "--output_dir",
                               "out", "--do_train", "--do_eval", "--num_train_epochs", "20",
                               "--per_device_train_batch_size", "16", "--eval_strategy",
                               "steps", "--eval_steps", "50", "--save_steps", "100",
                               "--block_size", "512", "--report_to", "none"],
                r"\b(\d+)/(\d+) \["),
        Example("deepspeed", ["deepspeed", "--num_gpus", "2", "--master_port", _port(),
                              "pretrain.py", "--deepspeed", "--deepspeed_config",
                              "ds_config.json", "--train-iters", "2000", "--micro-batch-size",
                              "16", "--global-batch-size", "64", "--seq-length", "256",
                              "--eval-iters", "10", "--eval-interval", "100", "--save",
                              "checkpoints", "--log-interval", "1"],
                r"^iteration (\d+)/(\d+)"),
    ]


@dataclass
class Run:
    wall: float = 0.0
    code: int | None = None
    steps: list[tuple[float, int]] = field(default_factory=list)  # (seconds, step)
    total: int | None = None


def run(argv: list[str], cwd: Path, env: dict[str, str], progress: str,
        window: float | None) -> Run:
    """Run ``argv``; stop it after ``window`` seconds (None: let it finish)."""
    out = Run()
    pattern = re.compile(progress)
    start = time.monotonic()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)

    def read() -> None:
        assert proc.stdout is not None
        pending = b""
        while chunk := proc.stdout.read1(65536):
            pending += chunk
            *lines, pending = re.split(rb"[\r\n]", pending)
            for line in lines:
                match = pattern.search(line.decode("utf-8", "replace").strip())
                if not match:
                    continue
                if match.lastindex and match.lastindex >= 2:
                    # The first bar is training's; an evaluation bar has another total.
                    if out.total is not None and int(match.group(2)) != out.total:
                        continue
                    out.total = int(match.group(2))
                out.steps.append((time.monotonic() - start, int(match.group(1))))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        out.code = proc.wait(timeout=window)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    out.wall = time.monotonic() - start
    reader.join(timeout=5)
    return out


def smoke_of(example: Example, cwd: Path) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-m", "rankdebug", "smoke", "--json", "--cwd",
                           str(cwd), "--", *example.command], capture_output=True, text=True,
                          check=True)
    result: dict[str, object] = json.loads(done.stdout)
    return result


def measure(example: Example, window: float) -> dict[str, object]:
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp) / example.name  # a copy: the full run writes outputs beside it
        shutil.copytree(EXAMPLES / example.name, cwd)
        full = run(example.command, cwd, env, example.progress, window)
        smoke = smoke_of(example, cwd)
        argv = smoke["argv"]
        extra = smoke["env"]
        assert isinstance(argv, list) and isinstance(extra, dict)
        small = run([str(a) for a in argv], cwd, {**env, **extra}, example.progress, None)
    total = full.total or example.total
    seen = max((s for _, s in full.steps), default=0)
    first = full.steps[0][0] if full.steps else None
    estimate = None
    if len(full.steps) >= 2 and total:
        (t0, s0), (t1, s1) = full.steps[0], full.steps[-1]
        if s1 > s0:
            estimate = t0 + (total - s0) * (t1 - t0) / (s1 - s0)
    return {"example": example.name, "full_steps_in_window": seen, "full_total_steps": total,
            "full_first_step_s": first, "full_estimate_s": estimate,
            "smoke_s": small.wall, "smoke_exit": small.code,
            "smoke_steps": max((s for _, s in small.steps), default=0),
            "ratio": estimate / small.wall if estimate and small.wall else None}


def _fmt(seconds: object) -> str:
    if not isinstance(seconds, int | float):
        return "-"
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 60:.1f} min" if seconds >= 120 else f"{seconds:.1f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--window", type=float, default=60.0,
                        help="seconds the full command runs (default 60)")
    parser.add_argument("--only", default="", help="comma-separated example names")
    parser.add_argument("--json", action="store_true", help="one JSON object per example")
    args = parser.parse_args()
    wanted = {n for n in args.only.split(",") if n}
    rows = []
    for example in examples():
        if wanted and example.name not in wanted:
            continue
        row = measure(example, args.window)
        rows.append(row)
        if args.json:
            print(json.dumps(row), flush=True)
    if args.json:
        return
    print(f"{'example':<11} {'full: steps in ' + _fmt(args.window):<22} {'full run (est.)':<16}"
          f"{'smoke run':<11} {'exit':<5} ratio")
    for r in rows:
        steps = f"{r['full_steps_in_window']} of {r['full_total_steps']}"
        ratio = r["ratio"]
        print(f"{r['example']:<11} {steps:<22} {_fmt(r['full_estimate_s']):<16}"
              f"{_fmt(r['smoke_s']):<11} {r['smoke_exit']!s:<5} "
              f"{f'{ratio:,.0f}x' if isinstance(ratio, float) else '-'}")


if __name__ == "__main__":
    main()

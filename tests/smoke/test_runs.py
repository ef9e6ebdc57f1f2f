"""Real smoke runs on this machine (CPU, gloo, 2 ranks): the bundled examples' full commands
would train for minutes to hours; their smoke commands, from `rankdebug smoke --json` as the
editor gets them, finish with exit 0 in well under a minute and write nothing beside them."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest
from smoke_helpers import EXAMPLES, cli, digest

# A bound, not a timing: the full runs take 12 minutes to hours (benchmarks/smoke_speedup.py
# measures the speed-up, 7-12 s a smoke run on a quiet machine); a smoke run under the CI's
# load once took 107 s.
LIMIT_S = 300


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _smoke_run(folder: Path, command: list[str]) -> str:
    """Shrink ``command``, run the smoke command in ``folder``; returns its output."""
    done = cli("smoke", "--json", "--cwd", str(folder), "--", *command)
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    before = digest(folder)
    start = time.monotonic()
    ran = subprocess.run(result["argv"], cwd=folder, env={**os.environ, **result["env"]},
                         capture_output=True, text=True, timeout=LIMIT_S, check=False)
    elapsed = time.monotonic() - start
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    assert elapsed < LIMIT_S, f"the smoke run took {elapsed:.1f} s"
    after = {k: v for k, v in digest(folder).items() if "__pycache__" not in k}
    assert after == {k: v for k, v in before.items() if "__pycache__" not in k}
    return ran.stdout + ran.stderr


def test_nanogpt_style_under_torchrun() -> None:
    out = _smoke_run(EXAMPLES / "nanogpt",
                     ["torchrun", "--standalone", "--nproc_per_node", "8", "train.py",
                      "config/char.py"])
    assert "iter 2:" in out and "iter 3:" not in out and "done" in out


def test_hf_trainer_under_accelerate() -> None:
    pytest.importorskip("transformers")
    out = _smoke_run(EXAMPLES / "hf_trainer",
                     ["accelerate", "launch", "--multi_gpu", "--num_processes", "2",
                      "--main_process_port", str(_free_port()), "train.py", "--output_dir",
                      "out", "--do_train", "--do_eval", "--num_train_epochs", "20",
                      "--per_device_train_batch_size", "16", "--eval_strategy", "steps",
                      "--eval_steps", "50", "--save_steps", "100", "--block_size", "512",
                      "--dataloader_num_workers", "2", "--report_to", "all"])
    assert out.count("'train_runtime'") == 2  # both ranks trained, and stopped


def test_deepspeed_json_under_the_deepspeed_launcher() -> None:
    pytest.importorskip("deepspeed")
    out = _smoke_run(EXAMPLES / "deepspeed",
                     ["deepspeed", "--num_gpus", "2", "--master_port", str(_free_port()),
                      "pretrain.py", "--deepspeed", "--deepspeed_config", "ds_config.json",
                      "--train-iters", "2000", "--micro-batch-size", "16",
                      "--global-batch-size", "64", "--seq-length", "256", "--eval-iters", "10",
                      "--eval-interval", "100", "--save", "checkpoints", "--log-interval", "10"])
    assert "iteration 3/3" in out and "done" in out

"""How fast is a plan? One command in a 2,000-line script, against `bash -n`.

Prints milliseconds per plan (in process, as the language server calls it, and
as the `rankdebug plan` CLI), and the ratio of each to `bash -n` on the same
file (bash only parses; it runs nothing). Median of interleaved runs.

    python benchmarks/plan_speed.py [--lines 2000] [--runs 15]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rankdebug.command import plan_text

BLOCK = """\
# ---------------------------------------------------------------------------
# Experiment {i}: {model} on {nodes} node(s); see docs/experiments.md
# ---------------------------------------------------------------------------
MODEL_{i}=${{MODEL_{i}:-{model}}}
export WANDB_RUN_NAME="${{PROJECT}}-{i}-$(date +%m%d)"
LR_{i}=$(python -c "print(1e-4 * {i} / 10)")
GBS_{i}=$((MICRO_BATCH * GRAD_ACC * {nodes} * GPUS_PER_NODE))
TRAIN_ARGS_{i}=(
    --model_name_or_path "$MODEL_{i}"
    --learning_rate 1e-4
    --global_batch_size $GBS_{i}
    --output_dir "$OUT_ROOT/{i}"
)
if [ "$STAGE" = "sft" ]; then
    DATA_{i}=alpaca_en_demo
else
    DATA_{i}=c4_demo
fi
mkdir -p "$OUT_ROOT/{i}"
echo "[{i}] model=$MODEL_{i} gbs=$GBS_{i}"
"""

LAUNCH = """\
CUDA_VISIBLE_DEVICES=0,1,2,3 torchrun --nnodes {nodes} --nproc_per_node $GPUS_PER_NODE \\
    --master_port $((29500 + {i})) src/train.py "${{TRAIN_ARGS_{i}[@]}}" \\
    --dataset "$DATA_{i}" > "$OUT_ROOT/{i}/log.txt" 2>&1
"""

HEADER = """\
#!/bin/bash
set -euo pipefail
PROJECT=bench
STAGE=${STAGE:-sft}
GPUS_PER_NODE=4
MICRO_BATCH=2
GRAD_ACC=8
OUT_ROOT=${OUT_ROOT:-./outputs}
log() { echo "[$(date +%T)] $*"; }
"""


def make_script(lines: int) -> tuple[str, int]:
    """A script of about `lines` lines in the style of real launch scripts, and the
    1-based line of a launch command near its end."""
    text = HEADER
    i = 0
    while text.count("\n") < lines - 4:
        nodes = 1 + i % 2
        text += BLOCK.format(i=i, model=["llama3-8b", "qwen2-7b", "mistral-7b"][i % 3],
                             nodes=nodes)
        if i % 4 == 3:
            text += LAUNCH.format(i=i, nodes=nodes)
        i += 1
    target = text.count("\n") + 1
    text += LAUNCH.format(i=i - 1, nodes=1)
    return text, target


def timed(fn: object, runs: int) -> float:
    assert callable(fn)
    t = time.perf_counter()
    for _ in range(runs):
        fn()
    return (time.perf_counter() - t) / runs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    text, line = make_script(args.lines)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "train.sh"
        path.write_text(text)
        plan = plan_text(text, line)  # warm up imports and the parser
        assert plan.launcher == "torchrun", plan.launcher
        cli = [sys.executable, "-m", "rankdebug", "plan", "--json", "--file", str(path),
               "--line", str(line)]
        bash = ["bash", "-n", str(path)]
        in_proc: list[float] = []
        cli_t: list[float] = []
        bash_t: list[float] = []
        for _ in range(args.runs):  # interleaved, so load affects all three alike
            in_proc.append(timed(lambda: plan_text(text, line), 3))
            t = time.perf_counter()
            subprocess.run(cli, check=True, capture_output=True)
            cli_t.append(time.perf_counter() - t)
            t = time.perf_counter()
            subprocess.run(bash, check=True, capture_output=True)
            bash_t.append(time.perf_counter() - t)
    ms = statistics.median(in_proc) * 1000
    cli_ms = statistics.median(cli_t) * 1000
    bash_ms = statistics.median(bash_t) * 1000
    print(f"script: {text.count(chr(10))} lines, {len(text.encode()) // 1024} KiB; "
          f"command at line {line}; median of {args.runs} interleaved runs")
    print(f"plan (in process):      {ms:8.1f} ms per plan")
    print(f"rankdebug plan (CLI):   {cli_ms:8.1f} ms per run")
    print(f"bash -n (parse only):   {bash_ms:8.1f} ms per run")
    print(f"ratio in-process / bash -n: {ms / bash_ms:6.2f}x")
    print(f"ratio CLI / bash -n:        {cli_ms / bash_ms:6.2f}x")


if __name__ == "__main__":
    main()

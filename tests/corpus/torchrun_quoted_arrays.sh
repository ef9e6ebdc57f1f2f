#!/usr/bin/env bash
set -euo pipefail

NPROC=${NPROC:=2}
RUN_NAME="baseline run"
USE_WANDB=1
EXTRA_ARGS=(--run_name "$RUN_NAME" --tags 'ablation a')
EXTRA_ARGS+=(--seed 42)
echo "launching with ${#EXTRA_ARGS[@]} extra args"

torchrun --nproc_per_node "$NPROC" train.py \
    "${EXTRA_ARGS[@]}" \
    ${USE_WANDB:+--report_to wandb}

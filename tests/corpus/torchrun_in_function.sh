#!/bin/bash
NPROC=4

run_stage() {
    local stage=$1
    torchrun --nproc_per_node $NPROC train.py --stage $stage
}

run_stage sft
run_stage dpo

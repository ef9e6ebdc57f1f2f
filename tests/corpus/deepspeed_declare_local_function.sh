#!/bin/bash
declare -a DS_ARGS=(--deepspeed --deepspeed_config configs/ds_zero2.json)
declare NUM_GPUS=4

launch() {
    local port=29600
    deepspeed --num_gpus "$NUM_GPUS" --master_port "$port" finetune.py "${DS_ARGS[@]}" --bf16
}

launch

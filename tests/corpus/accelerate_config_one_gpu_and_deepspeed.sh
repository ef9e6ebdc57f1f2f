#!/bin/bash
# The one-GPU config `accelerate config` writes: the simple launcher, one process,
# even when --num_processes asks for more without --multi_gpu.
accelerate launch --config_file configs/accelerate_one_gpu_config.yaml \
    --num_processes 4 train.py --epochs 1

# A DeepSpeed config: its machines and processes.
accelerate launch --config_file configs/accelerate_deepspeed_config.yaml train.py

#!/bin/bash
# 2 machines x 8 GPUs; the scheduler exports MACHINE_RANK on each host
MASTER=10.0.0.5
accelerate launch \
    --multi_gpu \
    --num_processes 16 \
    --num_machines 2 \
    --machine_rank $MACHINE_RANK \
    --main_process_ip $MASTER \
    --main_process_port 29500 \
    -m trl.scripts.sft \
    --model_name_or_path Qwen/Qwen2.5-0.5B \
    --dataset_name trl-lib/Capybara \
    --output_dir Qwen2.5-0.5B-SFT

#!/bin/bash
# pick every GPU with less than 1 GiB in use
export CUDA_VISIBLE_DEVICES=$(nvidia-smi --query-gpu=index,memory.used --format=csv,noheader,nounits | awk -F', ' '$2 < 1024 {print $1}' | paste -sd,)
torchrun --standalone --nproc_per_node=gpu train.py

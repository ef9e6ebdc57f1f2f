#!/bin/bash
# count the GPUs on this node
NGPUS=$(nvidia-smi -L | wc -l)
echo "Using $NGPUS GPUs"

torchrun --nproc_per_node=$NGPUS --master_port=29501 \
    train.py --output_dir outputs/run1

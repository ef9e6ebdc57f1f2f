#!/bin/bash
# the last command of a script ends in a backslash: bash ends it at the end of the file
ARGS=(
  --lr 0.1 \
  --epochs 3 \
)
torchrun --nproc_per_node 2 train.py "${ARGS[@]}" \
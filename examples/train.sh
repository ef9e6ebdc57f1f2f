#!/usr/bin/env bash
# The bundled two-rank example. Debug rank 1 of it with:
#   rankdebug launch --ranks 1 --file train.sh --line 5
cd "$(dirname "$0")"
torchrun --nproc_per_node 2 train.py --steps 50 --lr 0.05

#!/usr/bin/env bash
# The full run: 5000 iterations of a nanoGPT-style script on 2 ranks.
torchrun --standalone --nproc_per_node 2 smoke_train.py --batch_size=32 --max_iters=5000

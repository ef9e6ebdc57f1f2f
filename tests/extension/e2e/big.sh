#!/bin/bash
# 128 nodes of 8 GPUs: 1,024 ranks in the quick-pick (the e2e scale scenario only opens it).
torchrun --nnodes 128 --nproc_per_node 8 --node_rank 0 --rdzv_backend c10d --rdzv_endpoint head-node:29500 train.py

#!/bin/bash
# Megatron-LM at 1,024 ranks: tp 8 × pp 4 leaves dp 32 (the e2e coords scenario only opens the quick-pick).
torchrun --nnodes 128 --nproc_per_node 8 --node_rank 0 --rdzv_backend c10d --rdzv_endpoint head-node:29500 pretrain_gpt.py --tensor-model-parallel-size 8 --pipeline-model-parallel-size 4

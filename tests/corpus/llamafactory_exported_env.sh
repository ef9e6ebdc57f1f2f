#!/bin/bash
# Full-parameter SFT on one 8-GPU node, launched through torchrun by llamafactory-cli
export FORCE_TORCHRUN=1
export NNODES=1
export NODE_RANK=0
export NPROC_PER_NODE=8
export MASTER_PORT=29501

llamafactory-cli train examples/train_full/qwen3_full_sft.yaml

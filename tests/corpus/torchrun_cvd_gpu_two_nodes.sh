#!/bin/bash
# node 1 of 2; cards 2 and 3 are ours
CUDA_VISIBLE_DEVICES=2,3 torchrun --nnodes 2 --node-rank=1 --nproc-per-node=gpu \
    --master-addr=10.1.1.20 --master-port=29400 train.py

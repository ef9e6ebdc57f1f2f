#!/bin/bash
# Elastic job: between 1 and 4 nodes may join the rendezvous.
# Run the same command on every participating host.
export NCCL_ASYNC_ERROR_HANDLING=1

torchrun \
    --nnodes=1:4 \
    --nproc-per-node=8 \
    --max-restarts=3 \
    --rdzv-id=$JOB_ID \
    --rdzv-backend=c10d \
    --rdzv-endpoint=$HOST_NODE_ADDR \
    train.py --epochs 10 --batch-size 32

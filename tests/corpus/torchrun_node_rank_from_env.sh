#!/bin/bash
# launched by the cluster scheduler on each of the 2 nodes; it sets NODE_RANK and MASTER_ADDR
GPUS_PER_NODE=8
NNODES=2

torchrun --nnodes $NNODES --node_rank $NODE_RANK --nproc_per_node $GPUS_PER_NODE \
    --master_addr $MASTER_ADDR --master_port 29500 \
    train.py --deepspeed_config ds.json

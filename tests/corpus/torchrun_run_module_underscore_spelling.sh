#!/bin/bash
# old-style flag spellings with =, and the underscore module name
NODE_RANK=0
python3 -m torch.distributed.run \
    --nproc_per_node=4 \
    --nnodes=2 \
    --node_rank=$NODE_RANK \
    --rdzv_backend=c10d \
    --rdzv_endpoint=10.0.0.1:29400 \
    examples/imagenet/main.py -a resnet50 --dist-backend nccl /data/imagenet

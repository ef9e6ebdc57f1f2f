#!/bin/bash
python -m torch.distributed.run --nnodes=1 --nproc-per-node=2 --master-port=29600 \
    -m torch_example.main --batch 32 --epochs 2

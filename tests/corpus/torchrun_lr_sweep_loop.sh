#!/bin/bash
for lr in 1e-4 3e-4 1e-3; do
    echo "lr = $lr"
    torchrun --nproc_per_node 2 train.py \
        --lr $lr \
        --out runs/lr_$lr
done

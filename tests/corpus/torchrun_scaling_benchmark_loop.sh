#!/bin/bash
# weak scaling benchmark
for NGPU in 1 2 4 8
do
    torchrun --standalone --nproc_per_node $NGPU bench.py --iters 50
done

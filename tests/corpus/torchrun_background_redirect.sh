#!/bin/bash
mkdir -p logs
torchrun --nproc_per_node 2 train.py --epochs 5 > logs/train.log 2>&1 &
TRAIN_PID=$!
wait $TRAIN_PID

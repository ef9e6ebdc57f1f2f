#!/usr/bin/env bash
# Only use the three free cards on this box.
export CUDA_VISIBLE_DEVICES=1,2,3
export OMP_NUM_THREADS=8

torchrun --standalone --nproc-per-node gpu \
    train_ddp.py --config configs/resnet50.yaml

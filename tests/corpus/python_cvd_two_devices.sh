#!/bin/bash
# one process that uses two GPUs through model parallelism
CUDA_VISIBLE_DEVICES=0,1 python train.py --model_parallel --device_map auto

#!/bin/bash
# interactive allocation: salloc -N 1 --gpus=4
srun -N 1 -n 4 --gpus-per-task=1 python -u train.py --amp

#!/bin/bash
# helper called by follow_bash_wrapper.sh and follow_bash_unknown_arg.sh
NGPUS=${1:-8}
LR=${2:-5e-5}
echo "training with $NGPUS GPUs"
torchrun --nproc_per_node $NGPUS train.py --lr $LR

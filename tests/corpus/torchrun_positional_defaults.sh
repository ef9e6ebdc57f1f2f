#!/bin/bash
# usage: bash run.sh [NGPU] [CONFIG] [extra args...]
NGPU=${1:-8}
CONFIG=${2:-configs/base.yaml}

torchrun --nproc_per_node=$NGPU train.py --config $CONFIG "$@"

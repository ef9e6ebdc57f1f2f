#!/usr/bin/env bash

PYTHON=${PYTHON:-"python"}

CONFIG=${1:-configs/faster_rcnn_r50_fpn_1x.py}
GPUS=${2:-8}

$PYTHON -m torch.distributed.launch --nproc_per_node=$GPUS \
    $(dirname "$0")/train.py $CONFIG --launcher pytorch ${@:3}

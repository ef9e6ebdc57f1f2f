#!/bin/bash
GPUS=${GPUS:-4}
OUTPUT=${1:-}

if [ -z "$OUTPUT" ]; then
    OUTPUT=./output
fi

if [ "$GPUS" -gt 1 ]; then
  DIST_OPTS="--nproc_per_node=$GPUS --master_port=29501"
else
  DIST_OPTS="--nproc_per_node=1"
fi

torchrun $DIST_OPTS train.py --output_dir $OUTPUT

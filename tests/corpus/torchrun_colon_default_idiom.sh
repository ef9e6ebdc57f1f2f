#!/bin/bash
set -eu
: "${NPROC:=4}"
: "${MASTER_PORT:=29511}"
declare -r CONFIG=configs/vit.yaml

torchrun --nproc_per_node "$NPROC" --master_port "$MASTER_PORT" train.py --config "$CONFIG"

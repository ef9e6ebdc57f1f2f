#!/bin/bash
# Debug on the first host only, with 4 of its GPUs.
deepspeed --hostfile hostfiles/ds_hostfile --num_nodes 1 --num_gpus 4 \
    train.py --deepspeed_config ds_config.json

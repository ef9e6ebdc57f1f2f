#!/bin/bash
# helper called by follow_executable_script.sh
deepspeed --num_gpus 2 train.py --deepspeed_config ds_config.json "$@"

#!/bin/bash
# deepspeed turns CUDA_VISIBLE_DEVICES into --include when no resource flag is given
CUDA_VISIBLE_DEVICES=0,1 deepspeed run_translation.py --deepspeed ds_config_zero3.json \
    --model_name_or_path google-t5/t5-small --do_train --output_dir output_dir

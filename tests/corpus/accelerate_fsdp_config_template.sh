#!/bin/bash
# FSDP on two GPUs using the config template
accelerate launch --config_file configs/accelerate_fsdp.yaml --main_process_port 29501 \
    examples/complete_nlp_example.py --mixed_precision bf16 --output_dir out

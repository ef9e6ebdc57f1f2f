#!/bin/bash
accelerate launch --multi_gpu --num_processes=2 --mixed_precision fp16 ./nlp_example.py --checkpointing_steps epoch

#!/bin/bash
NUM_GPUS=2
deepspeed --num_gpus $NUM_GPUS --module training.run --cfg configs/zero2.yaml

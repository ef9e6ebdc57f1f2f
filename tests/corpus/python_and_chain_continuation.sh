#!/bin/bash
set -e
mkdir -p logs/$(date +%F) && \
    python train.py --log_dir logs --seed 0

#!/bin/bash
python scripts/prepare_data.py --out data/tokens &&
    # tokenization done; now train on both cards
    torchrun --nproc_per_node 2 train.py --data data/tokens

#!/bin/bash
# NPROC_PER_NODE is a plain shell variable here: llamafactory-cli never sees it
NPROC_PER_NODE=8
FORCE_TORCHRUN=1 llamafactory-cli train examples/train_full/llama3_full_sft.yaml

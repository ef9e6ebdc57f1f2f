#!/usr/bin/env bash
# A two-rank job that runs until it is stopped (examples/train.sh ends within a second):
# the e2e suite right-clicks its torchrun line to start it armed.
torchrun --nproc_per_node 2 long_train.py

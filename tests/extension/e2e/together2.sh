#!/usr/bin/env bash
# Two ranks, rank 1 two seconds late to its loop: the e2e suite right-clicks the torchrun line
# and debugs both ranks with no breakpoint, runs them to a line of the loop (Run Chosen Ranks to
# Cursor), then makes rank 1 raise (together2_train.py says how).
torchrun --nproc_per_node 2 together2_train.py

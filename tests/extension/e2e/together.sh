#!/usr/bin/env bash
# Two ranks over an all_reduce, until stopped; only rank 0 reaches the breakpoint line: the e2e
# suite right-clicks the torchrun line and debugs both ranks (they stop together), steps them,
# and binds a breakpoint to rank 1 (together_train.py says which lines).
torchrun --nproc_per_node 2 together_train.py

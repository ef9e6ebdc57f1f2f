#!/usr/bin/env bash
# Four ranks whose values differ across ranks: the e2e suite right-clicks the torchrun line,
# debugs rank 0 with every rank armed (`0 arm`), and compares `weight` and `grad` across the
# ranks from the Variables view and the Debug Console (compare_train.py says which differ).
torchrun --nproc_per_node 4 compare_train.py

#!/usr/bin/env bash
# Four ranks that deadlock: the e2e suite right-clicks the torchrun line, arms every rank
# (`arm`), waits for the hang notification and opens Why Is This Job Stuck? (stuck_train.py).
torchrun --nproc_per_node 4 stuck_train.py

#!/usr/bin/env bash
# Four stdlib-only ranks until stopped: the e2e suite sets rankdebug.maxSessions to 2,
# right-clicks the torchrun line and debugs ranks 0-3 (two sessions, two ranks without one);
# rank 0 alone reaches the breakpoint (cap_train.py says which line).
torchrun --nproc_per_node 4 cap_train.py

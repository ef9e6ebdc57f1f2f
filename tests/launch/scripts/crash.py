"""Rank 0 fails at once; the other ranks would wait for it forever."""

import sys
import time

import torch.distributed as dist

dist.init_process_group("gloo")
if dist.get_rank() == 0:
    sys.exit(3)
dist.barrier()
time.sleep(600)

"""Rank 1 stays away for PAUSE_S seconds while rank 0 waits in a collective (timeout 10 s)."""

import os
import time
from datetime import timedelta

import torch
import torch.distributed as dist

dist.init_process_group("gloo", timeout=timedelta(seconds=10))
rank = dist.get_rank()
t = torch.ones(1)
dist.all_reduce(t)
if rank == 1:
    time.sleep(float(os.environ.get("PAUSE_S", "30")))
dist.all_reduce(t)
print(f"rank {rank} done: {t.item()}", flush=True)
dist.destroy_process_group()

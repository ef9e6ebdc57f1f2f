"""Rank 1 raises after a few steps (uncaught) with a 3 s collective timeout; the other ranks
go on to the next all_reduce and wait there for it."""

import time
from datetime import timedelta

import torch
import torch.distributed as dist

dist.init_process_group("gloo", timeout=timedelta(seconds=3))
rank = dist.get_rank()
t = torch.ones(1)
for _ in range(3):
    dist.all_reduce(t)
    time.sleep(0.05)
if rank == 1:
    loss = float("nan")  # read by the test's debugger
    raise ValueError(f"loss is {loss}")  # RAISES
dist.all_reduce(t)
dist.destroy_process_group()

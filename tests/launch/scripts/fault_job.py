"""A gloo job for the fault tests: every rank steps through an all_reduce every 50 ms for
STEPS steps (default 60), passing the BREAK line each step, and ends with exit 0."""

import os
import time
from datetime import timedelta

import torch
import torch.distributed as dist

dist.init_process_group("gloo", timeout=timedelta(seconds=120))
steps = int(os.environ.get("STEPS", "60"))
t = torch.ones(1)
for step in range(steps):
    seen = step  # BREAK
    dist.all_reduce(t)
    time.sleep(0.05)
dist.barrier()
dist.destroy_process_group()

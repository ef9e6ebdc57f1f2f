"""A real 2-rank gloo job for the terminal debugger's tests: each step adds the rank's own
number to ``x`` (a value that differs by rank until the all_reduce) and all-reduces it.
STEPS_END=N ends it after N steps (default: it runs until stopped)."""

import os
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
x = torch.zeros(3)
end = int(os.environ.get("STEPS_END", "0"))
step = 0
while not end or step < end:
    x = x + rank + 1  # BREAK
    dist.all_reduce(x)  # REDUCE
    time.sleep(0.01)
    step += 1
dist.destroy_process_group()

"""Ranks that loop over an all_reduce until MARKER_DIR/done exists (on any rank: the flag
travels in the all_reduce, so every rank leaves at the same step); rank 0 alone reaches the
line tagged RANK0 (at step 2). Each step sleeps a little, so ranks spend most of their time
in Python. LATE_RANK=N: rank N starts its loop 2 s late."""

import os
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
done = os.path.join(os.environ["MARKER_DIR"], "done")
if os.environ.get("LATE_RANK") == str(rank):
    time.sleep(2.0)
with open(os.path.join(os.environ["MARKER_DIR"], f"loop-{rank}"), "w"):
    pass  # the loop starts
state = torch.zeros(2)  # [steps, ranks that saw the done file]
step = 0
while state[1] == 0:
    state[0] += 1
    if rank == 0 and step == 2:
        seen = step  # RANK0
    time.sleep(0.02)  # SLEEP
    state[1] = float(os.path.exists(done))
    dist.all_reduce(state)  # REDUCE
    step += 1
dist.destroy_process_group()

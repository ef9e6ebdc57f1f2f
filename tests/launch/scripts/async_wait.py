"""Ranks that loop over an async all_reduce (``work = dist.all_reduce(..., async_op=True)``,
then ``work.wait()``) until MARKER_DIR/done exists (on any rank: the flag travels in the
all_reduce, so every rank leaves at the same step). Each rank writes MARKER_DIR/ready-RANK
first. LATE_RANK=N: rank N starts its loop only once MARKER_DIR/go exists, so the others
wait for it in the ``work.wait()`` of all_reduce #1 of group 0."""

import os
import time

import torch
import torch.distributed as dist

MARKERS = os.environ["MARKER_DIR"]
dist.init_process_group("gloo")
rank = dist.get_rank()
with open(os.path.join(MARKERS, f"ready-{rank}"), "w") as f:
    f.write(str(os.getpid()))
if os.environ.get("LATE_RANK") == str(rank):
    while not os.path.exists(os.path.join(MARKERS, "go")):
        time.sleep(0.05)  # LATE
state = torch.zeros(2)  # [steps, ranks that saw the done file]
while state[1] == 0:
    state[0] += 1
    state[1] = float(os.path.exists(os.path.join(MARKERS, "done")))
    work = dist.all_reduce(state, async_op=True)  # ISSUE
    work.wait()  # WAIT
    time.sleep(0.02)
dist.destroy_process_group()

"""A gloo/CPU training loop that runs until told to stop, for the fuzz tests: every rank
all-reduces once a step and writes its step count to MARKER_DIR/steps-RANK, until
MARKER_DIR/stop exists (the ranks agree on it through the step's all_reduce)."""

import os
import time

import torch
import torch.distributed as dist

OUT = os.environ["MARKER_DIR"]

dist.init_process_group("gloo")
rank = dist.get_rank()
step = 0
while True:
    stop = torch.tensor([1.0 if os.path.exists(os.path.join(OUT, "stop")) else 0.0])
    dist.all_reduce(stop)
    if stop.item() > 0:
        break
    step += 1
    tmp = os.path.join(OUT, f".steps-{rank}.tmp")
    with open(tmp, "w") as f:
        f.write(str(step))
    os.replace(tmp, os.path.join(OUT, f"steps-{rank}"))
    time.sleep(0.02)
dist.destroy_process_group()

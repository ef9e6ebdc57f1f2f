"""A real 2-rank gloo job for the terminal debugger's tests: each step adds the rank's own
number to ``x`` (a value that differs by rank until the all_reduce) and all-reduces it.
STEPS_END=N ends it after N steps (default: it runs until stopped); STEPS_MARK=1 prints
"at-break" when rank 1 first reaches the BREAK line (a plain run's time to it: the benchmark's
floor); MESH=1 lays the ranks out on a dp x tp DeviceMesh (their coordinates)."""

import os
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
if os.environ.get("MESH") == "1":  # the ranks laid out as dp x tp (1 x 2): rank 1 is tp 1
    from torch.distributed.device_mesh import init_device_mesh

    mesh = init_device_mesh("cpu", (1, 2), mesh_dim_names=("dp", "tp"))
x = torch.zeros(3)
end = int(os.environ.get("STEPS_END", "0"))
step = 0
mark = os.environ.get("STEPS_MARK") == "1" and rank == 1
while not end or step < end:
    if mark and step == 0:
        print("at-break", flush=True)
    x = x + rank + 1  # BREAK
    dist.all_reduce(x)  # REDUCE
    time.sleep(0.01)
    step += 1
dist.destroy_process_group()

"""A gloo/CPU job that lays its ranks out the way LAYOUT says, for the coordinates tests.

- mesh: a 2-D DeviceMesh, ``init_device_mesh("cpu", (2, WORLD // 2), ("dp", "tp"))``, and a
  slice of it (``mesh["tp"]``), as a tensor-parallel job keeps one;
- megatron: Megatron's ``parallel_state.initialize_model_parallel(2, 2)`` (the stand-in on
  PYTHONPATH: tp is the fastest-changing dimension, then dp, then pp);
- none: no layout at all, only the default process group.

Every rank writes MARKER_DIR/ready-RANK once its layout exists, then waits in steps of
all_reduce (in train_step) until MARKER_DIR/stop exists.
"""

import os
import time

import torch
import torch.distributed as dist

OUT = os.environ["MARKER_DIR"]
LAYOUT = os.environ.get("LAYOUT", "mesh")

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
keep = []
if LAYOUT == "mesh":
    from torch.distributed.device_mesh import init_device_mesh

    mesh = init_device_mesh("cpu", (2, world // 2), mesh_dim_names=("dp", "tp"))
    keep.append(mesh["tp"])
elif LAYOUT == "megatron":
    from megatron.core import parallel_state

    parallel_state.initialize_model_parallel(2, 2)


def train_step(t):
    dist.all_reduce(t)
    return t


tmp = os.path.join(OUT, f".ready-{rank}.tmp")
with open(tmp, "w") as f:
    f.write(str(os.getpid()))
os.replace(tmp, os.path.join(OUT, f"ready-{rank}"))
while True:
    stop = train_step(torch.tensor([1.0 if os.path.exists(os.path.join(OUT, "stop")) else 0.0]))
    if stop.item() > 0:
        break
    time.sleep(0.05)
dist.destroy_process_group()

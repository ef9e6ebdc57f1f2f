"""A Lightning Fabric script run as Slurm's tasks (``srun python fabric_slurm_script.py``):
Lightning's SLURMEnvironment takes SLURM_PROCID for the rank and starts no processes itself.
Writes $MARKER_DIR/rank-N.json."""

import json
import os
import sys

import torch
from lightning_fabric import Fabric

fabric = Fabric(devices=2, num_nodes=1, accelerator="cpu", strategy="ddp")
fabric.launch()
rank = fabric.global_rank
total = fabric.all_reduce(torch.tensor(float(rank + 1)), reduce_op="sum")  # BREAK
marker = os.environ.get("MARKER_DIR")
if marker:
    with open(os.path.join(marker, f"rank-{rank}.json"), "w") as f:
        json.dump({"rank": rank, "world": fabric.world_size, "total": float(total),
                   "environment": type(fabric._connector.cluster_environment).__name__,
                   "debugpy": "debugpy" in sys.modules}, f)
fabric.barrier()

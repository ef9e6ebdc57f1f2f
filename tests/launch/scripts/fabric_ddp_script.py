"""A Lightning Fabric script run with plain ``python``: ``Fabric(devices=2, ...)`` and
``fabric.launch()`` start the second rank as a copy of this script (Lightning's subprocess
script launcher, LOCAL_RANK in its environment). Writes $MARKER_DIR/rank-N.json."""

import json
import os
import sys

import torch
from lightning_fabric import Fabric

fabric = Fabric(devices=2, accelerator="cpu", strategy="ddp")
fabric.launch()
rank = fabric.global_rank
total = fabric.all_reduce(torch.tensor(float(rank + 1)), reduce_op="sum")  # BREAK
marker = os.environ.get("MARKER_DIR")
if marker:
    with open(os.path.join(marker, f"rank-{rank}.json"), "w") as f:
        json.dump({"rank": rank, "world": fabric.world_size, "total": float(total),
                   "local_rank": os.environ.get("LOCAL_RANK"),
                   "debugpy": "debugpy" in sys.modules}, f)
fabric.barrier()

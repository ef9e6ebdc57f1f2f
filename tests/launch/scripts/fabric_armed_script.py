"""A Lightning Fabric script run with plain ``python`` and armed (``rankdebug launch --arm``):
``Fabric(devices=2, ...)`` starts rank 1 as a copy of this script (Lightning's subprocess
script launcher). Each rank writes MARKER_DIR/ready-RANK (its pid) once both are up, then
counts steps until MARKER_DIR/stop exists, and the job ends with a last all_reduce."""

import os
import time

import torch
from lightning_fabric import Fabric

OUT = os.environ["MARKER_DIR"]

fabric = Fabric(devices=2, accelerator="cpu", strategy="ddp")
fabric.launch()
rank = fabric.global_rank
fabric.all_reduce(torch.ones(1))
with open(os.path.join(OUT, f".ready-{rank}"), "w") as f:
    f.write(str(os.getpid()))
os.replace(os.path.join(OUT, f".ready-{rank}"), os.path.join(OUT, f"ready-{rank}"))
step = 0
while not os.path.exists(os.path.join(OUT, "stop")):
    step += 1  # BREAK
    time.sleep(0.02)
fabric.all_reduce(torch.ones(1))
fabric.barrier()

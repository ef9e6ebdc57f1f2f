"""A Lightning Fabric script whose device count comes from its command line
(`--devices 2`): the plan cannot count its ranks, so the editor offers *Choose when the ranks
start*. Fabric starts rank 1 as a copy of this script (LOCAL_RANK=1). Each rank steps until
STOP_FILE (default ./stop) exists, then the job ends with a last all_reduce."""

import argparse
import os
import time

import torch
from lightning_fabric import Fabric

parser = argparse.ArgumentParser()
parser.add_argument("--devices", type=int, default=1)
parser.add_argument("--seconds", type=float, default=600.0)
args = parser.parse_args()

fabric = Fabric(devices=args.devices, accelerator="cpu", strategy="ddp")
fabric.launch()
rank = fabric.global_rank
fabric.all_reduce(torch.ones(1))
stop = os.environ.get("STOP_FILE", "stop")
end = time.monotonic() + args.seconds
step = 0
while not os.path.exists(stop) and time.monotonic() < end:
    step += 1  # BREAK
    time.sleep(0.05)
fabric.all_reduce(torch.ones(1))
fabric.barrier()

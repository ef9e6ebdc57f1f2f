"""The test's ``axolotl.cli.train``: a few DDP steps on gloo under a launcher, or one process
when run in axolotl's own process (no RANK)."""

import os
import sys
from datetime import timedelta

import torch
import torch.distributed as dist


def do_cli(config: str) -> None:
    distributed = "RANK" in os.environ
    if distributed:
        dist.init_process_group("gloo", timeout=timedelta(seconds=60))
    model = torch.nn.Linear(4, 1)
    if distributed:
        model = torch.nn.parallel.DistributedDataParallel(model)
    for _step in range(2):
        loss = model(torch.ones(2, 4)).sum()  # BREAK
        loss.backward()
    print("trained on", config, "rank", os.environ.get("RANK", "-"))
    if distributed:
        del model, loss
        dist.destroy_process_group()


if __name__ == "__main__":
    do_cli(sys.argv[1])

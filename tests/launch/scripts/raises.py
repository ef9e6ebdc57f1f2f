"""Rank 1 raises in a function of the script (uncaught); rank 0 waits at a barrier."""

from datetime import timedelta

import torch.distributed as dist

dist.init_process_group("gloo", timeout=timedelta(seconds=60))


def load(batch):
    scale = 0  # read by the test's debugger
    return batch / scale  # RAISES


if dist.get_rank() == 1:
    load(4)
dist.barrier()
dist.destroy_process_group()

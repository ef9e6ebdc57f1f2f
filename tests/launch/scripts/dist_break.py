"""Every rank calls rankdebug.breakpoint(ranks=1); the others wait, then all finish."""

import os
import time

import torch
import torch.distributed as dist

import rankdebug

dist.init_process_group("gloo")
rank = dist.get_rank()
rankdebug.breakpoint(ranks=1)  # STOP
after = time.time()
t = torch.ones(1)
dist.all_reduce(t)
with open(os.path.join(os.environ["MARKER_DIR"], f"after-{rank}.txt"), "w") as f:
    f.write(repr(after))
dist.destroy_process_group()

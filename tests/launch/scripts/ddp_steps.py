"""A tiny DDP job on gloo: a few steps; writes what it imported to $MARKER_DIR/rank-N.json."""

import gc
import json
import os
import sys
from datetime import timedelta

import torch
import torch.distributed as dist

dist.init_process_group("gloo", timeout=timedelta(seconds=60))
rank = dist.get_rank()
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _step in range(3):
    loss = model(torch.ones(2, 4)).sum()  # BREAK
    loss.backward()
    opt.step()
    opt.zero_grad()
marker = os.environ.get("MARKER_DIR")
if marker:
    with open(os.path.join(marker, f"rank-{rank}.json"), "w") as f:
        json.dump({
            "rank": rank,
            "debugpy": "debugpy" in sys.modules,
            "rankdebug": sorted(m for m in sys.modules if m.startswith("rankdebug")),
            "pydevd": "pydevd" in sys.modules,
        }, f)
# Free DDP (it holds the process group) before the interpreter ends: torch 2.13's gloo worker
# otherwise may drop its last work during finalization and abort the rank (std::terminate).
del model, opt, loss
gc.collect()  # DDP's hooks form cycles
dist.destroy_process_group()

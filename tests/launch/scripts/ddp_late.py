"""DDP (or FSDP2's ``fully_shard``) on gloo, where one rank is late at a chosen point, so the
others wait for it in a collective that torch issues from C++ or from its own code.

MODE=ddp|fsdp (ddp). LATE_RANK=N: rank N, at step LATE_STEP (0-based, default 0), waits before
LATE_AT (``forward`` or ``backward``) until MARKER_DIR/go exists, having written
MARKER_DIR/late-N. Under DDP the others then wait in backward's bucket all_reduce
(``backward``, step 0) or in the bucket rebuild's broadcast at the next forward
(``forward``, step 1). Each rank writes MARKER_DIR/ready-RANK first and runs STEPS (3) steps.
"""

import gc
import os
import time
from datetime import timedelta

import torch
import torch.distributed as dist

MARKERS = os.environ["MARKER_DIR"]
MODE = os.environ.get("MODE", "ddp")
LATE_AT = os.environ.get("LATE_AT", "backward")
LATE_STEP = int(os.environ.get("LATE_STEP", "0"))
STEPS = int(os.environ.get("STEPS", "3"))


def late(rank, step, where):
    if os.environ.get("LATE_RANK") != str(rank) or (step, where) != (LATE_STEP, LATE_AT):
        return
    with open(os.path.join(MARKERS, f"late-{rank}"), "w") as f:
        f.write(str(os.getpid()))
    while not os.path.exists(os.path.join(MARKERS, "go")):
        time.sleep(0.05)  # LATE


def build():
    net = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    if MODE == "fsdp":
        from torch.distributed.fsdp import fully_shard

        for layer in (net[0], net[2]):
            fully_shard(layer)
        return fully_shard(net)
    return torch.nn.parallel.DistributedDataParallel(net)


def main():
    dist.init_process_group("gloo", timeout=timedelta(seconds=600))
    rank = dist.get_rank()
    model = build()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with open(os.path.join(MARKERS, f"ready-{rank}"), "w") as f:
        f.write(str(os.getpid()))
    for step in range(STEPS):
        late(rank, step, "forward")
        loss = model(torch.ones(4, 8)).sum()  # FORWARD
        late(rank, step, "backward")
        loss.backward()  # BACKWARD
        opt.step()
        opt.zero_grad()
    # DDP holds the group through cycles of hooks: freed before the group is destroyed.
    del model, opt, loss
    gc.collect()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

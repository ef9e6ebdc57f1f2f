"""A gloo/CPU job whose ranks wait inside methods of torch's own classes, for ``rankdebug eval
--frame`` on a library frame's ``self``.

A DistributedDataParallel model (with a BatchNorm, so that its forward broadcasts buffers)
and a ZeroRedundancyOptimizer (whose step broadcasts each rank's shard). Every rank writes
MARKER_DIR/ready-RANK after its first backward. Then:

1. the last rank waits for MARKER_DIR/go while the others wait in the optimizer's
   broadcast, inside ``ZeroRedundancyOptimizer.step`` (``self.param_groups[0]["lr"]`` is LR);
2. the last rank waits for MARKER_DIR/go2 while the others wait in the model's buffer
   broadcast, inside ``DistributedDataParallel.forward`` called by ``Module._call_impl``;
3. every rank ends.
"""

import os
import time

import torch
import torch.distributed as dist
from torch.distributed.optim import ZeroRedundancyOptimizer
from torch.nn.parallel import DistributedDataParallel

OUT = os.environ["MARKER_DIR"]
LR = 0.125


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)
        self.bn = torch.nn.BatchNorm1d(8)

    def forward(self, x):
        return self.bn(self.fc(x))


def wait_for(name):
    while not os.path.exists(os.path.join(OUT, name)):
        time.sleep(0.05)


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    last = rank == dist.get_world_size() - 1
    torch.manual_seed(0)
    model = DistributedDataParallel(Net())
    optimizer = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.SGD,
                                        lr=LR)
    x = torch.randn(4, 8)
    model(x).sum().backward()
    with open(os.path.join(OUT, f"ready-{rank}"), "w") as f:
        f.write(str(os.getpid()))
    if last:
        wait_for("go")
    optimizer.step()  # the others wait in its broadcast for the last rank
    if last:
        wait_for("go2")
    model(x)  # the others wait in DDP's buffer broadcast for the last rank
    dist.barrier()
    del model, optimizer  # DDP's reducer goes before the group it holds (gloo aborts at exit)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

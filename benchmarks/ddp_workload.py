"""The benchmarks' training job: a small DDP model on gloo/CPU, a marked line in the loop.

Environment: BENCH_OUT (folder) - each rank writes ``reach-<rank>.txt`` (wall time it first
reached the marked line) and ``steps-<rank>.txt`` (one step time per line);
BENCH_STEPS (default 30) - steps to run. Step times are the CPU time of the rank's own
forward and backward; the gradients are then averaged with all_reduce (untimed).
"""

import os
import time

import torch
import torch.distributed as dist
from torch import nn

OUT = os.environ.get("BENCH_OUT", "")
STEPS = int(os.environ.get("BENCH_STEPS", "30"))


def mark(rank, step):
    if step == 0 and OUT:
        now = time.time()
        tmp = os.path.join(OUT, f".reach-{rank}.tmp")
        with open(tmp, "w") as f:
            f.write(repr(now))
        os.replace(tmp, os.path.join(OUT, f"reach-{rank}.txt"))


def never_called():
    return "a breakpoint here is set but never hit"  # NEVER


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.a = nn.Linear(width, width)
        self.b = nn.Linear(width, width)

    def forward(self, x):
        return x + self.b(torch.relu(self.a(x)))


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = nn.Sequential(*[Block(64) for _ in range(24)], nn.Linear(64, 1))
    ddp = nn.parallel.DistributedDataParallel(model)  # construction: part of time to pause
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-3)
    x = torch.randn(16, 64)
    times = []
    for step in range(STEPS):
        mark(rank, step)  # BREAK
        if rank == 0 and step == 2:
            _ = step  # RANK0 (stop together: the other ranks are paused for it)
        # Timed: this rank's own compute, no collective in it (a paused or slower peer must
        # not count here); the gradients are averaged after.
        # CPU time of the process: on a shared machine, time spent waiting for a core is
        # not the rank's own cost.
        start = time.process_time()
        loss = model(x).pow(2).mean()
        loss.backward()
        times.append(time.process_time() - start)
        for p in model.parameters():
            dist.all_reduce(p.grad)
        opt.step()
        opt.zero_grad()
    if OUT:
        with open(os.path.join(OUT, f"steps-{rank}.txt"), "w") as f:
            f.write("\n".join(repr(t) for t in times))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

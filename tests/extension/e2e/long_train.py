"""A DDP job on gloo/CPU that runs until it is stopped (one small step every 50 ms).

The end-to-end suite starts it with plain torchrun, outside VS Code and without rankdebug,
to check that Training Jobs finds it, shows its stacks and attaches to a rank of it.
"""

import time

import torch
import torch.distributed as dist
from torch import nn


def train_step(model, opt, x, y):
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()  # the e2e breakpoint
    opt.step()
    return loss


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(rank)
    model = nn.parallel.DistributedDataParallel(nn.Linear(1, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    print(f"rank {rank} running", flush=True)
    while True:
        x = torch.randn(8, 1)
        train_step(model, opt, x, 3 * x + 1)
        time.sleep(0.05)


if __name__ == "__main__":
    main()

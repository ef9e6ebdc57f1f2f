"""A tiny DDP training job on gloo/CPU: two ranks fit y = 3x + 1 together.

    torchrun --nproc_per_node 2 train.py --steps 50 --lr 0.05
"""

import argparse

import torch
import torch.distributed as dist
from torch import nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--lr", type=float, default=0.05)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(rank)
    model = nn.parallel.DistributedDataParallel(nn.Linear(1, 1))
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)

    for step in range(args.steps):
        x = torch.randn(32, 1)
        y = 3 * x + 1
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()  # gradients are averaged across ranks here
        opt.step()
        if step % 10 == 0 and rank == 0:
            print(f"step {step:3d}  loss {loss.item():.4f}", flush=True)

    w, b = model.module.weight.item(), model.module.bias.item()
    if rank == 0:
        print(f"done: y = {w:.2f}x + {b:.2f}", flush=True)
    # Every rank is done with its collectives before any tears its group down, and DDP's
    # reducer goes before the group it holds: torch 2.13's gloo can otherwise abort a rank at
    # exit ("terminate called without an active exception"), seen under load.
    dist.barrier()
    del model
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

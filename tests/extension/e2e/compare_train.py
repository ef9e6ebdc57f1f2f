"""Four ranks for Compare Across Ranks (the end-to-end scenario `compare`): every rank builds
the same weight from one seed, but rank 2's differs in one element (1234, at [19, 18]) by 1e-3,
and rank 1's grad holds a NaN; `loss` is a number per rank. They loop over an all_reduce until
the job is stopped. Rank 0 alone reaches the line tagged `the e2e breakpoint` (at step 2); the
others then wait for it in the all_reduce, inside main() too."""

import time

import torch
import torch.distributed as dist

ODD_INDEX = 1234


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    weight = torch.randn(64, 64)
    if rank == 2:
        weight.view(-1)[ODD_INDEX] += 1e-3
    grad = torch.ones(8)
    if rank == 1:
        grad[3] = float("nan")
    loss = 2.0 + 0.25 * rank
    state = torch.zeros(1)
    step = 0
    while True:
        state += loss
        time.sleep(0.05)
        if rank == 0 and step == 2:
            seen = step  # the e2e breakpoint: rank 0 alone
            seen += 1
        dist.all_reduce(state)
        step += 1


main()

"""Four ranks that deadlock (the end-to-end scenario `whystuck`): rank 3 skips the all_reduce of
step 2 (the line tagged `the skipped collective`), then waits in a barrier of a second group;
ranks 0-2 wait for it in the all_reduce of step 3. Nothing moves again until the job is stopped."""

import torch
import torch.distributed as dist


def train_step(t):
    dist.all_reduce(t)
    return t


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    sync = dist.new_group(backend="gloo")
    t = torch.ones(4)
    for step in range(4):
        if rank == 3 and step == 2:
            continue  # the skipped collective
        train_step(t)
    dist.barrier(group=sync)  # rank 3 waits here for the others


if __name__ == "__main__":
    main()

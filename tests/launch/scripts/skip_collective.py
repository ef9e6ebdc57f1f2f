"""A gloo/CPU job where one rank skips one all_reduce (``rankdebug stacks`` names it).

Every rank runs STEPS all_reduces on the default group, but rank SKIPPER (the last) skips
the one of step SKIP_AT. Then every rank enters a barrier of a second group ("sync"): the
others wait in all_reduce #STEPS of group 0 for the skipper, which waits in the barrier for
them. Each rank writes MARKER_DIR/ready-RANK first; MARKER_DIR/stop ends nothing: the job
hangs until it is killed (that is the point).
"""

import os

import torch
import torch.distributed as dist

OUT = os.environ["MARKER_DIR"]
STEPS = 6
SKIP_AT = 3


def train_step(t):
    dist.all_reduce(t)
    return t


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    skipper = dist.get_world_size() - 1
    sync = dist.new_group(group_desc="sync")
    with open(os.path.join(OUT, f"ready-{rank}"), "w") as f:
        f.write(str(os.getpid()))
    t = torch.ones(4)
    for step in range(1, STEPS + 1):
        if rank == skipper and step == SKIP_AT:
            continue
        train_step(t)
    dist.barrier(group=sync)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

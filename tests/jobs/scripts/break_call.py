"""Every rank calls rankdebug.breakpoint(ranks=0) in a function of the user's: rank 0 stops
there (listening for a debugger until one attaches), rank 1 waits in the call until rank 0
is continued. Each rank then writes MARKER_DIR/after-RANK."""

import os

import torch.distributed as dist

import rankdebug


def checkpoint(step):
    rankdebug.breakpoint(ranks=0)  # CALL
    return step + 1  # AFTER


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    step = checkpoint(41)
    with open(os.path.join(os.environ["MARKER_DIR"], f"after-{rank}"), "w") as f:
        f.write(str(step))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""A gloo/CPU job for the armed-rank tests (``rankdebug launch --arm``).

Every rank writes MARKER_DIR/ready-RANK once all are up. Then the last rank loops in
stuck_in_data until MARKER_DIR/release exists, while the others wait in train_step's
all_reduce: the stacks differ. After that every rank counts its steps into
MARKER_DIR/steps-RANK (no collective in the loop) until MARKER_DIR/stop exists, and the job
ends with a last all_reduce.
"""

import os
import time

import torch
import torch.distributed as dist

OUT = os.environ["MARKER_DIR"]


def stuck_in_data(marker):
    while not os.path.exists(marker):
        time.sleep(0.05)


def train_step(t):
    dist.all_reduce(t)
    return t


def write(name, text):
    tmp = os.path.join(OUT, f".{name}.tmp")
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, os.path.join(OUT, name))


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    lr = 0.001 * (rank + 1)  # noqa: F841 (read by `rankdebug eval`)
    t = torch.ones(1)
    dist.all_reduce(t)
    write(f"ready-{rank}", str(os.getpid()))
    if rank == dist.get_world_size() - 1:
        stuck_in_data(os.path.join(OUT, "release"))
    train_step(t)
    step = 0
    while not os.path.exists(os.path.join(OUT, "stop")):
        step += 1  # BREAK
        write(f"steps-{rank}", str(step))
        time.sleep(0.02)
    train_step(t)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

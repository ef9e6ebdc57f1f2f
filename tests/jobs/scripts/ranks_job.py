"""A gloo/CPU job for the running-jobs tests, started with plain torchrun (no rankdebug).

JOB_MODE=hang: ranks 0-2 wait in all_reduce (in train_step) while rank 3 loops in
stuck_in_data until MARKER_DIR/release exists. JOB_MODE=loop: every rank counts its steps
into MARKER_DIR/steps-RANK, with no collective in the loop, until MARKER_DIR/stop exists;
then one last all_reduce. Every rank writes MARKER_DIR/ready-RANK once all are up.
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


def loop(rank):
    step = 0
    while not os.path.exists(os.path.join(OUT, "stop")):
        step += 1  # BREAK
        write(f"steps-{rank}", str(step))
        time.sleep(0.02)
    return step


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    t = torch.ones(1)
    dist.all_reduce(t)
    write(f"ready-{rank}", str(os.getpid()))
    if os.environ.get("JOB_MODE") == "hang":
        if rank == 3:
            stuck_in_data(os.path.join(OUT, "release"))
        train_step(t)
        total = t.item()  # AFTER
        write(f"total-{rank}", str(total))
    else:
        loop(rank)
        train_step(t)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""A gloo/CPU job for Compare Across Ranks (``rankdebug eval JOB RANKS ...``).

Every rank builds the same weights from one seed; rank 2's differ in one element (index
ODD_INDEX) by 1e-3, and rank 1's gradient holds one NaN. Each rank writes
MARKER_DIR/ready-RANK once its values are set. Then every rank but the last enters
``Trainer.training_step``'s all_reduce and waits there (a library frame on top) while the
last rank waits for MARKER_DIR/go; after that all step slowly until MARKER_DIR/stop exists.
"""

import os
import time

import torch
import torch.distributed as dist

OUT = os.environ["MARKER_DIR"]
ODD_INDEX = 1234


class Trainer:
    def __init__(self, weight):
        self.weight = weight
        self.global_step = 0

    def training_step(self, t):
        self.global_step += 1
        dist.all_reduce(t)  # BREAK
        return t


def wait_for(name):
    while not os.path.exists(os.path.join(OUT, name)):
        time.sleep(0.05)


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
    scale = [rank, rank * 2]  # noqa: F841 (read by `rankdebug eval`)
    trainer = Trainer(weight)
    with open(os.path.join(OUT, f"ready-{rank}"), "w") as f:
        f.write(str(os.getpid()))
    if rank == dist.get_world_size() - 1:
        wait_for("go")
    t = torch.ones(1)
    while not os.path.exists(os.path.join(OUT, "stop")):
        trainer.training_step(t)
        time.sleep(0.05)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""A gloo/CPU job for the hold tests: rank RAISE_RANK (default 1) raises in load_batch,
uncaught; the other ranks wait at a barrier. The process group's own timeout is 3 s (the
collective-timeout guard raises it). Every rank writes MARKER_DIR/ready-RANK (its pid) first.
With THREAD=1 the exception is raised in a worker thread instead, which the main thread
joins.
"""

import os
import threading
from datetime import timedelta

import torch.distributed as dist

OUT = os.environ["MARKER_DIR"]


def load_batch(step, rank):
    values = [rank, step]
    scale = step - 7  # read by the tests' debugger and eval
    return sum(values) / scale  # RAISES


def write(name, text):
    tmp = os.path.join(OUT, f".{name}.tmp")
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, os.path.join(OUT, name))


def main():
    dist.init_process_group("gloo", timeout=timedelta(seconds=3))
    rank = dist.get_rank()
    lr = 0.001 * (rank + 1)  # noqa: F841 (read by `rankdebug eval` in the waiting ranks)
    dist.barrier()
    write(f"ready-{rank}", str(os.getpid()))
    if rank == int(os.environ.get("RAISE_RANK", "1")):
        if os.environ.get("THREAD") == "1":
            worker = threading.Thread(target=load_batch, args=(7, rank), name="loader")
            worker.start()
            worker.join()
        else:
            load_batch(7, rank)
    dist.barrier()  # WAIT
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

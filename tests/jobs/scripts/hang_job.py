"""A gloo/CPU job that hangs (or not) the way SCENARIO says, for ``rankdebug diagnose``.

Every rank warms up with two all_reduces, writes MARKER_DIR/ready-RANK (its pid), then
writes MARKER_DIR/at-RANK just before the call it stays in. The odd rank is the last one.

- skip: the odd rank skips the all_reduce of step SKIP_AT; then every rank enters a barrier
  of a second group ("sync"): the others wait in all_reduce #STEPS+2 of group 0 for it, it
  waits in the barrier for them;
- mismatch: at the last step the odd rank calls all_gather where the others all_reduce;
- dead: the odd rank exits (status 0) before init_process_group: the others wait there;
- spin: the odd rank spins in load_batch, polling a source that never has a batch;
- queue: the odd rank blocks in next_batch, on a queue nothing ever fills;
- healthy: every rank trains (a matmul and an all_reduce a step) until MARKER_DIR/stop;
- slow: as healthy, but the odd rank spends SLOW_S more in each step (slow_augment).
"""

import os
import queue
import sys
import time

import torch
import torch.distributed as dist

OUT = os.environ["MARKER_DIR"]
SCENARIO = os.environ.get("SCENARIO", "healthy")
STEPS = 4
SKIP_AT = 2
SLOW_S = 0.12


def mark(name, rank):
    tmp = os.path.join(OUT, f".{name}-{rank}.tmp")
    with open(tmp, "w") as f:
        f.write(str(os.getpid()))
    os.replace(tmp, os.path.join(OUT, f"{name}-{rank}"))


def train_step(t):
    dist.all_reduce(t)
    return t


def gather_step(t):
    out = [torch.zeros_like(t) for _ in range(dist.get_world_size())]
    dist.all_gather(out, t)
    return out


class Source:
    def poll(self):
        return None  # the files it reads never arrive


def load_batch(source):
    while True:  # SPIN
        batch = source.poll()
        if batch is not None:
            return batch


def next_batch(batches):
    return batches.get()  # QUEUE


def slow_augment(x):
    time.sleep(SLOW_S)
    return x


def train(rank, odd, t):
    w = torch.randn(64, 64)
    step = 0
    while not os.path.exists(os.path.join(OUT, "stop")):
        x = torch.randn(16, 64) @ w
        if SCENARIO == "slow" and rank == odd:
            x = slow_augment(x)
        t.fill_(float(x.sum() > 0))
        train_step(t)
        step += 1
        if step == 3:
            mark("at", rank)
        time.sleep(0.01)


def main():
    rank = int(os.environ["RANK"])
    odd = int(os.environ["WORLD_SIZE"]) - 1
    if SCENARIO == "dead":
        if rank == odd:
            mark("at", rank)
            sys.exit(0)  # DEAD
        mark("at", rank)
    dist.init_process_group("gloo")  # INIT
    sync = dist.new_group(group_desc="sync")
    t = torch.ones(4)
    dist.all_reduce(t)
    dist.all_reduce(t)
    mark("ready", rank)
    if SCENARIO in ("healthy", "slow"):
        train(rank, odd, t)
    elif SCENARIO == "skip":
        for step in range(1, STEPS + 1):
            if rank == odd and step == SKIP_AT:
                continue
            if step == STEPS:
                mark("at", rank)
            train_step(t)  # SKIP_WAIT
        dist.barrier(group=sync)  # BARRIER
    elif SCENARIO == "mismatch":
        mark("at", rank)
        if rank == odd:
            gather_step(t)  # GATHER
        else:
            train_step(t)
    elif SCENARIO == "spin":
        mark("at", rank)
        if rank == odd:
            load_batch(Source())
        train_step(t)  # WAIT
    elif SCENARIO == "queue":
        mark("at", rank)
        if rank == odd:
            next_batch(queue.Queue())
        train_step(t)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

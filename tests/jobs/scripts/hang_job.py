"""A gloo/CPU job that hangs (or not) the way SCENARIO says, for ``rankdebug diagnose``.

Every rank warms up with two all_reduces, writes MARKER_DIR/ready-RANK (its pid), then
writes MARKER_DIR/at-RANK just before the call it stays in. The odd rank is the last one.

- skip: the odd rank skips the all_reduce of step SKIP_AT; then every rank enters a barrier
  of a second group ("sync"): the others wait in all_reduce #STEPS+2 of group 0 for it, it
  waits in the barrier for them;
- mismatch: at the last step the odd rank calls all_gather where the others all_reduce;
- dead: the odd rank exits (status 0) before init_process_group: the others wait there;
- spin: the odd rank spins in load_batch, polling a source that never has a batch;
- eval: the odd rank evaluates (a long loop of matmuls in evaluate, one function all
  along, a new batch each time round) while the others wait in all_reduce for it: slow,
  not stuck;
- queue: the odd rank blocks in next_batch, on a queue nothing ever fills;
- exit: the odd rank exits (status 0) after the warm-up; the others' next all_reduce waits,
  or raises where gloo sees its peer gone (held under ``rankdebug launch``);
- raise: the odd rank raises in forward (under ``rankdebug launch`` it is held there; a
  plain torchrun would end the job);
- ddp: a DistributedDataParallel model; the odd rank blocks in next_batch while the others
  wait in DDP's bucket all_reduce, issued from C++ inside backward;
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
    dist.all_reduce(t)  # COLLECTIVE
    return t


def gather_step(t):
    out = [torch.zeros_like(t) for _ in range(dist.get_world_size())]
    dist.all_gather(out, t)  # GATHER_CALL
    return out


class Source:
    def poll(self):
        return None  # the files it reads never arrive


def load_batch(source):
    while True:  # SPIN
        batch = source.poll()
        if batch is not None:
            return batch


def evaluate(t):
    w = torch.randn(64, 64)
    total = 0.0
    for _ in range(1 << 40):
        x = torch.randn(64, 64)
        y = x @ w
        total += float(y.sum())  # EVAL


def next_batch(batches):
    return batches.get()  # QUEUE


def forward(t):
    loss = float("nan")
    raise ValueError(f"loss is {loss}")  # RAISE


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


def skip(rank, odd, t, sync):
    for step in range(1, STEPS + 1):
        if rank == odd and step == SKIP_AT:
            continue
        if step == STEPS:
            mark("at", rank)
        train_step(t)
    dist.barrier(group=sync)  # BARRIER


def mismatch(rank, odd, t, sync):
    mark("at", rank)
    if rank == odd:
        gather_step(t)
    else:
        train_step(t)


def odd_one(rank, odd, t, sync):
    """spin, queue, exit, raise: the odd rank does that, the others all_reduce."""
    mark("at", rank)
    if rank == odd:
        if SCENARIO == "spin":
            load_batch(Source())
        elif SCENARIO == "eval":
            evaluate(t)
        elif SCENARIO == "queue":
            next_batch(queue.Queue())
        elif SCENARIO == "raise":
            forward(t)
        else:
            sys.exit(0)  # EXIT
    if SCENARIO == "exit":
        time.sleep(1.0)  # the odd rank is gone before the others' all_reduce
    train_step(t)


def ddp(rank, odd, t, sync):
    from torch.nn.parallel import DistributedDataParallel

    model = DistributedDataParallel(torch.nn.Linear(8, 8))
    x = torch.randn(4, 8)
    model(x).sum().backward()  # a first step: DDP's buckets are built
    mark("at", rank)
    if rank == odd:
        next_batch(queue.Queue())
    model(x).sum().backward()  # BACKWARD


def main():
    rank = int(os.environ["RANK"])
    odd = int(os.environ["WORLD_SIZE"]) - 1
    if SCENARIO == "dead":
        mark("at", rank)
        if rank == odd:
            sys.exit(0)  # DEAD
    dist.init_process_group("gloo")  # INIT
    sync = dist.new_group(group_desc="sync")
    t = torch.ones(4)
    dist.all_reduce(t)
    dist.all_reduce(t)
    mark("ready", rank)
    if SCENARIO in ("healthy", "slow"):
        train(rank, odd, t)
    else:
        {"skip": skip, "mismatch": mismatch, "ddp": ddp}.get(SCENARIO, odd_one)(rank, odd, t,
                                                                               sync)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

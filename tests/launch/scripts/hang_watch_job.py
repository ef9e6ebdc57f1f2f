"""A gloo/CPU job for the hang watch: every rank trains (a matmul and an all_reduce a step)
until rank 0 sees MARKER_DIR/stop (said to all in that all_reduce), and the last rank does
what SCENARIO says.

- stall: at step STALL_AT the last rank writes MARKER_DIR/stalled (its pid) and waits for
  MARKER_DIR/go, polling it (the others wait in their all_reduce meanwhile); then all go on;
- slow: the last rank spends SLOW_S (env, default 1.5) more in each step;
- healthy: no rank does anything odd.

Each rank writes MARKER_DIR/step-RANK (its step count) every step.
"""

import os
import time

import torch
import torch.distributed as dist

OUT = os.environ["MARKER_DIR"]
SCENARIO = os.environ.get("SCENARIO", "healthy")
STALL_AT = 5
SLOW_S = float(os.environ.get("SLOW_S", "1.5"))


def write(name, text):
    tmp = os.path.join(OUT, f".{name}.tmp")
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, os.path.join(OUT, name))


def wait_for_go():
    write("stalled", str(os.getpid()))
    while not os.path.exists(os.path.join(OUT, "go")):  # STALL
        time.sleep(0.1)


def slow_augment(x):
    time.sleep(SLOW_S)
    return x


def main():
    dist.init_process_group("gloo")
    rank, odd = dist.get_rank(), dist.get_world_size() - 1
    w = torch.randn(64, 64)
    t = torch.ones(2)
    step = 0
    while True:
        step += 1
        x = torch.randn(16, 64) @ w  # BREAK
        if rank == odd and SCENARIO == "slow":
            x = slow_augment(x)
        if rank == odd and SCENARIO == "stall" and step == STALL_AT:
            wait_for_go()
        t[0] = float(x.sum() > 0)
        t[1] = float(rank == 0 and os.path.exists(os.path.join(OUT, "stop")))
        dist.all_reduce(t)  # COLLECTIVE
        write(f"step-{rank}", str(step))
        if t[1] > 0:
            break
        time.sleep(0.05)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

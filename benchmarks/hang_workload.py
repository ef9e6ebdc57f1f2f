"""The healthy job of ``hang_watch.py``: every rank steps (a matmul and an all_reduce) for
BENCH_SECONDS, then writes the wall time of each step to BENCH_OUT/steps-RANK.txt."""

import os
import time

import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    seconds = float(os.environ.get("BENCH_SECONDS", "8"))
    w = torch.randn(192, 192)
    t = torch.ones(1024)
    for _ in range(20):  # warm-up
        dist.all_reduce(t)
    flag = torch.zeros(1)
    times = []
    start = time.perf_counter()
    while True:
        t0 = time.perf_counter()
        x = torch.randn(64, 192) @ w
        t[0] = float(x.sum() > 0)
        dist.all_reduce(t)
        times.append(time.perf_counter() - t0)
        # Rank 0 says when to stop, in the same step for all.
        flag[0] = float(rank == 0 and time.perf_counter() - start > seconds)
        dist.all_reduce(flag)
        if flag[0] > 0:
            break
    with open(os.path.join(os.environ["BENCH_OUT"], f"steps-{rank}.txt"), "w") as f:
        f.write(" ".join(f"{s:.6f}" for s in times))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

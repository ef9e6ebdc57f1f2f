"""A tiny multi-node job: a few gloo all_reduce steps, one line per step, a clean exit.

Launched by torchrun (which sets RANK, WORLD_SIZE, MASTER_ADDR, ...), by Open MPI's mpirun
(rank and size from OMPI_COMM_WORLD_*, MASTER_ADDR/MASTER_PORT passed with -x) or by srun
(SLURM_PROCID, SLURM_NTASKS; MASTER_ADDR/MASTER_PORT from srun's environment). Each step sums
``rank + 1`` over the world, so with W ranks every line shows ``sum W*(W+1)/2``.
"""

from __future__ import annotations

import os
import socket
import sys
import time

import torch
import torch.distributed as dist


def main() -> None:
    for rank_var, size_var in (
        ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
        ("SLURM_PROCID", "SLURM_NTASKS"),
    ):
        if "RANK" not in os.environ and rank_var in os.environ:
            os.environ["RANK"] = os.environ[rank_var]
            os.environ["WORLD_SIZE"] = os.environ[size_var]
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world = dist.get_world_size()
    steps = int(os.environ.get("ALLREDUCE_STEPS", "3"))
    for step in range(steps):
        value = torch.tensor([float(rank + 1)])
        dist.all_reduce(value)
        # One write per line: ranks share the output, and print() writes the text and the
        # newline apart when Python is unbuffered (lines got glued together).
        sys.stdout.write(
            f"rank {rank} world {world} sum {int(value.item())} step {step} "
            f"host {socket.gethostname()} master {os.environ.get('MASTER_ADDR')}\n"
        )
        sys.stdout.flush()
        time.sleep(0.05)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""A detectron2-style ``train_net.py`` (tools/train_net.py over detectron2/engine/defaults.py's
``default_argument_parser`` and detectron2/engine/launch.py's ``launch``, trimmed; detectron2
is not installed here): with --num-gpus × --num-machines of 1, main runs in this process."""

import argparse
import os

import torch.multiprocessing as mp


def default_argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    parser.add_argument("--config-file", default="", metavar="FILE")
    parser.add_argument("--num-gpus", type=int, default=1)
    parser.add_argument("--num-machines", type=int, default=1)
    parser.add_argument("--machine-rank", type=int, default=0)
    parser.add_argument("--dist-url", default="tcp://127.0.0.1:50152")
    parser.add_argument("opts", default=None, nargs=argparse.REMAINDER)
    return parser


def launch(main_func, num_gpus_per_machine, num_machines=1, machine_rank=0, dist_url=None,
           args=()):
    world_size = num_machines * num_gpus_per_machine
    if world_size > 1:
        mp.start_processes(_worker, nprocs=num_gpus_per_machine, args=(main_func, args),
                           daemon=False)
    else:
        main_func(*args)


def _worker(local_rank, main_func, args) -> None:
    main_func(*args)  # detectron2's worker calls init_process_group(rank=...) first


def main(args) -> None:
    total = 0
    for i in range(3):
        total += i  # BREAK
    print("total", total, "config", args.config_file, "pid", os.getpid())


if __name__ == "__main__":
    args = default_argument_parser().parse_args()
    launch(main, args.num_gpus, num_machines=args.num_machines,
           machine_rank=args.machine_rank, dist_url=args.dist_url, args=(args,))

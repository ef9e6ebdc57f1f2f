"""A stand-in for MosaicML Composer's ``composer`` (composer/cli/launcher.py ``_get_parser``,
``_parse_args`` and ``_launch_processes``, trimmed), which is not installed here (it pins an
older torch): nproc from -n, LOCAL_WORLD_SIZE or the GPU count (at least 1); one ``python
SCRIPT ARGS`` per local rank with RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, NODE_RANK,
MASTER_ADDR and MASTER_PORT set; the first non-zero exit code is the launcher's."""

import os
import socket
import subprocess
import sys
import time
from argparse import REMAINDER, ArgumentParser

import torch


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> int:
    parser = ArgumentParser()
    parser.add_argument("-n", "--nproc", type=int)
    parser.add_argument("-m", "--module_mode", action="store_true")
    parser.add_argument("--world_size", type=int)
    parser.add_argument("--base_rank", type=int)
    parser.add_argument("--node_rank", type=int)
    parser.add_argument("--master_addr", type=str)
    parser.add_argument("--master_port", type=int)
    parser.add_argument("training_script", type=str)
    parser.add_argument("training_script_args", nargs=REMAINDER)
    args = parser.parse_args()
    if args.nproc is None:
        args.nproc = int(os.environ.get("LOCAL_WORLD_SIZE", torch.cuda.device_count())) or 1
    if args.world_size is None:
        args.world_size = args.nproc
    if args.world_size != args.nproc:
        sys.exit("composer_stub: only a single node is modelled")
    master_port = args.master_port or _free_port()
    processes = []
    for local_rank in range(args.nproc):
        cmd = [sys.executable, *(["-m"] if args.module_mode else []), args.training_script,
               *args.training_script_args]
        env = {**os.environ, "RANK": str(local_rank), "WORLD_SIZE": str(args.world_size),
               "LOCAL_RANK": str(local_rank), "LOCAL_WORLD_SIZE": str(args.nproc),
               "NODE_RANK": "0", "MASTER_ADDR": args.master_addr or "127.0.0.1",
               "MASTER_PORT": str(master_port), "PYTHONUNBUFFERED": "1"}
        processes.append(subprocess.Popen(cmd, env=env))
    while any(p.poll() is None for p in processes):
        if any(p.returncode not in (None, 0) for p in processes):
            for p in processes:
                if p.poll() is None:
                    p.terminate()
            break
        time.sleep(0.1)
    return next((p.wait() for p in processes if p.wait() != 0), 0)


if __name__ == "__main__":
    sys.exit(main())

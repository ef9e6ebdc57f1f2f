"""A stand-in for XTuner's ``xtuner`` (xtuner/entry_point.py ``cli()``, trimmed to the modes
that run a tool), which is not installed here: each mode is a script (here
``$XTUNER_TOOLS/MODE.py``, as xtuner finds its own in xtuner/tools); with NNODES and
NPROC_PER_NODE at 1 (their default) or ``--launcher slurm``, ``python TOOL.py ARGS`` as a
child; otherwise ``torchrun --nnodes --node_rank --nproc_per_node --master_addr
--master_port TOOL.py ARGS --launcher pytorch``."""

import os
import random
import subprocess
import sys

TOOLS = os.environ.get("XTUNER_TOOLS") or os.path.dirname(os.path.abspath(__file__))
MODES = ("train", "test", "chat")


def cli() -> None:
    args = sys.argv[1:]
    if not args or args[0].lower() not in MODES:
        sys.exit("xtuner_stub: only train, test and chat are modelled")
    tool = os.path.join(TOOLS, args[0].lower() + ".py")
    slurm_launcher = False
    for i in range(1, len(args)):
        if args[i] == "--launcher":
            if i + 1 < len(args) and args[i + 1] == "slurm":
                slurm_launcher = True
            break
    nnodes = int(os.environ.get("NNODES", "1"))
    nproc_per_node = int(os.environ.get("NPROC_PER_NODE", "1"))
    if slurm_launcher or (nnodes == 1 and nproc_per_node == 1):
        subprocess.run(["python", tool, *args[1:]], check=False)
    else:
        port = os.environ.get("PORT", None)
        if port is None:
            port = random.randint(20000, 29999)
        torchrun_args = [
            f"--nnodes={nnodes}",
            f"--node_rank={os.environ.get('NODE_RANK', '0')}",
            f"--nproc_per_node={nproc_per_node}",
            f"--master_addr={os.environ.get('ADDR', '127.0.0.1')}",
            f"--master_port={port}",
        ]
        result = subprocess.run(["torchrun", *torchrun_args, tool, *args[1:],
                                 "--launcher", "pytorch"], check=False)
        sys.exit(result.returncode)


if __name__ == "__main__":
    cli()

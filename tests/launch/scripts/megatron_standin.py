"""A stand-in for a Megatron-LM training script: takes (and ignores) Megatron's parallel
flags, runs a few all-reduces on gloo, and writes what it imported to $MARKER_DIR/rank-N.json."""

import argparse
import json
import os
import sys
from datetime import timedelta

import torch
import torch.distributed as dist

parser = argparse.ArgumentParser(allow_abbrev=False)
parser.add_argument("--tensor-model-parallel-size", type=int, default=1)
parser.add_argument("--pipeline-model-parallel-size", type=int, default=1)
args, _rest = parser.parse_known_args()

dist.init_process_group("gloo", timeout=timedelta(seconds=90))
rank = dist.get_rank()
total = torch.ones(1)
for _step in range(2):
    dist.all_reduce(total)  # BREAK
marker = os.environ.get("MARKER_DIR")
if marker:
    with open(os.path.join(marker, f"rank-{rank}.json"), "w") as f:
        json.dump({"rank": rank, "debugpy": "debugpy" in sys.modules,
                   "tp": args.tensor_model_parallel_size}, f)
dist.destroy_process_group()

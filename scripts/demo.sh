#!/usr/bin/env bash
# Quick start, part 1: set everything up, then run the main job on the bundled
# two-rank example (examples/train.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
line=$(grep -n 'torchrun' examples/train.sh | head -n1 | cut -d: -f1)
echo "\$ rankdebug plan --file examples/train.sh --line $line"
rankdebug plan --file examples/train.sh --line "$line" --cwd examples \
    | python -c 'import json, sys; p = json.load(sys.stdin); keep = ("launcher", "nnodes", "nproc_per_node", "world_size", "entry", "entry_args", "env", "ranks", "span", "warnings"); print(json.dumps({k: p[k] for k in keep}, indent=2))'

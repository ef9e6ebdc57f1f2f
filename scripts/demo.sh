#!/usr/bin/env bash
# Quick start, part 1: set everything up, then debug rank 1 of the bundled two-rank
# example (examples/train.sh) end to end in this terminal.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh demo
exec .venv/bin/python scripts/demo.py

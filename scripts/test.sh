#!/usr/bin/env bash
# Sets everything up, then runs every check and test: lint, types, pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
echo "== ruff"; ruff check pyserver tests benchmarks
echo "== mypy"; mypy
echo "== pytest"; python -m pytest "$@"

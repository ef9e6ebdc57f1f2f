#!/usr/bin/env bash
# Sets everything up, then runs every check and test: Python lint, types and tests,
# then the extension's checks, unit tests and end-to-end suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
echo "== ruff"; ruff check pyserver tests benchmarks scripts
echo "== mypy"; mypy
echo "== pytest"; python -m pytest "$@"
if [ -f scripts/test-extension.sh ]; then
    echo "== extension"; bash scripts/test-extension.sh
fi

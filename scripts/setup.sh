#!/usr/bin/env bash
# Creates .venv and installs rankdebug with its test tools; a no-op when nothing changed.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-$(command -v python3.11 || command -v python3)}
if [ ! -x .venv/bin/python ]; then
    echo "setting up .venv with $("$PY" --version) (PyTorch 2.13.0 CPU is part of it: a few minutes)"
    "$PY" -m venv .venv
fi
stamp=.venv/.rankdebug-setup
want=$(cat pyproject.toml scripts/setup.sh | sha256sum | cut -c1-16)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    log=.venv/setup.log
    echo "installing rankdebug and its test tools into .venv (the whole log: $log)"
    # pip's own output goes to the log; a line per package shows that it moves on.
    show() {
        while IFS= read -r line; do
            case $line in
                Collecting*|"Installing collected"*|"Successfully installed"*)
                    printf '  %s\n' "${line%% (from*}" | cut -c1-160 ;;
            esac
        done
    }
    if ! { .venv/bin/python -m pip install --disable-pip-version-check --upgrade pip &&
           .venv/bin/python -m pip install --disable-pip-version-check -e '.[test]'; } 2>&1 |
            tee "$log" | show; then
        tail -n 40 "$log"
        echo "setup failed; the whole log is in $log" >&2
        exit 1
    fi
    echo "$want" > "$stamp"
fi

#!/usr/bin/env bash
# Creates .venv and installs rankdebug with what is asked: `setup.sh demo` what the demo
# needs (rankdebug and PyTorch), `setup.sh` (or `setup.sh test`) the test tools too
# (DeepSpeed, Ray, transformers, accelerate, Lightning Fabric: about 1.6 GB in all).
# A no-op when nothing changed; a test set-up serves the demo as well.
set -euo pipefail
want_extra=${1:-test}
case $want_extra in demo|test) ;; *) echo "setup.sh: demo or test, not '$want_extra'" >&2; exit 2 ;; esac
cd "$(dirname "$0")/.."
PY=${PYTHON:-$(command -v python3.11 || command -v python3)}
if [ ! -x .venv/bin/python ]; then
    echo "setting up .venv with $("$PY" --version) (PyTorch 2.13.0 CPU is part of it: a few minutes)"
    "$PY" -m venv .venv
fi
stamp=.venv/.rankdebug-setup
want=$(cat pyproject.toml scripts/setup.sh | sha256sum | cut -c1-16)
have=$(cat "$stamp" 2>/dev/null || true)
if [ "$have" != "$want test" ] && [ "$have" != "$want $want_extra" ]; then
    log=.venv/setup.log
    if [ "$want_extra" = test ]; then
        echo "installing rankdebug, PyTorch 2.13.0 (CPU) and the test tools into .venv (the whole log: $log)"
    else
        echo "installing rankdebug and PyTorch 2.13.0 (CPU) into .venv (the whole log: $log)"
    fi
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
           .venv/bin/python -m pip install --disable-pip-version-check -e ".[$want_extra]"; } 2>&1 |
            tee "$log" | show; then
        tail -n 40 "$log"
        echo "setup failed; the whole log is in $log" >&2
        exit 1
    fi
    echo "$want $want_extra" > "$stamp"
fi

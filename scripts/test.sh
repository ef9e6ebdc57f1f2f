#!/usr/bin/env bash
# Sets everything up, then runs every check and test: Python lint, types and tests,
# then the extension's checks, unit tests and end-to-end suite. Arguments go to pytest.
#   RANKDEBUG_SKIP_MULTINODE=1  no system packages for the multi-node tests, and no
#                               tests/multinode (two namespace hosts with sshd, Slurm)
#   RANKDEBUG_SKIP_E2E=1        no end-to-end suite (no code-server cache, no Chromium)
set -euo pipefail
cd "$(dirname "$0")/.."
skip_nodes=${RANKDEBUG_SKIP_MULTINODE:-0}
# Say up front what this run will put on the machine, outside the clone.
echo "== set-up: .venv in this clone (rankdebug, PyTorch 2.13.0 CPU, DeepSpeed, Ray, transformers,"
echo "   accelerate, Lightning Fabric: about 1.6 GB; reused afterwards)"
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    if [ "$skip_nodes" = 1 ]; then
        echo "   as root, with apt-get, where missing: openmpi-bin (the mpirun tests)"
    else
        echo "   as root, with apt-get, where missing: openmpi-bin, openssh-server, slurmctld, slurmd,"
        echo "   slurm-client, munge, pdsh (the multi-node tests; RANKDEBUG_SKIP_MULTINODE=1 skips them)"
    fi
fi
if [ "${RANKDEBUG_SKIP_E2E:-0}" != 1 ]; then
    echo "   ~/.cache/rankdebug: code-server, Node 24 and Playwright for the end-to-end suite (about"
    echo "   800 MB, kept across runs; as root also Debian's chromium; RANKDEBUG_SKIP_E2E=1 skips it)"
fi
bash scripts/setup.sh
. .venv/bin/activate
# Debian's Open MPI lets the mpirun launcher be tested for real (root installs it once).
if ! command -v mpirun >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "== installing openmpi-bin for the mpirun tests"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openmpi-bin; } \
        >/tmp/rankdebug-apt.log 2>&1 || echo "(openmpi-bin could not be installed; see /tmp/rankdebug-apt.log)"
fi
# A real sshd in each node of the multi-node tests' two-host cluster (tests/multinode).
if [ "$skip_nodes" != 1 ] && ! command -v sshd >/dev/null && [ ! -x /usr/sbin/sshd ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "== installing openssh-server for the multi-node tests"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssh-server; } \
        >/tmp/rankdebug-apt-ssh.log 2>&1 || echo "(openssh-server could not be installed; see /tmp/rankdebug-apt-ssh.log)"
fi
# Slurm (slurmctld, one slurmd per node, munge) for the multi-node tests' srun runs.
if [ "$skip_nodes" != 1 ] && ! command -v slurmd >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "== installing Slurm for the multi-node tests"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurmctld slurmd slurm-client munge; } \
        >/tmp/rankdebug-apt-slurm.log 2>&1 || echo "(Slurm could not be installed; see /tmp/rankdebug-apt-slurm.log)"
fi
# pdsh: DeepSpeed's multi-node runner, for the multi-node tests' deepspeed --hostfile run.
if [ "$skip_nodes" != 1 ] && ! command -v pdsh >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "== installing pdsh for the multi-node tests"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pdsh; } \
        >/tmp/rankdebug-apt-pdsh.log 2>&1 || echo "(pdsh could not be installed; see /tmp/rankdebug-apt-pdsh.log)"
fi
# Each part runs whatever the others gave, and the end says which failed: a failing half
# must not hide the other half's result.
failed=()
part() {
    local name=$1; shift
    echo "== $name"
    if ! "$@"; then failed+=("$name"); fi
}
part ruff ruff check pyserver tests benchmarks scripts
part mypy mypy
part "mypy (rank side, on the oldest Python mypy checks: 3.10)" \
    mypy --python-version 3.10 pyserver/rankdebug/runtime
if [ "$skip_nodes" = 1 ]; then
    echo "== RANKDEBUG_SKIP_MULTINODE=1: tests/multinode skipped"
    part pytest python -m pytest --ignore=tests/multinode "$@"
else
    part pytest python -m pytest "$@"
fi
if [ -f scripts/test-extension.sh ]; then
    part extension bash scripts/test-extension.sh
fi
if [ ${#failed[@]} -gt 0 ]; then
    printf '== FAILED: %s\n' "${failed[@]}"
    exit 1
fi
echo "== every part passed"

"""Run a script with real bash, launchers replaced by stubs that record what they were given.

Each stub is an executable named like the program it stands for (``torchrun``, ``srun``,
``python``...) put first on PATH; it appends one JSON line per call (its name, argv, working
directory and a few environment variables) to a log and exits 0. Stubs of outer launchers
(``srun``, ``mpirun``) then run the program after their own options, as the real ones do,
so ``srun bash -c "torchrun ..."`` reaches the ``torchrun`` stub.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

# Environment variables each call records (those plans read).
WATCHED = ("CUDA_VISIBLE_DEVICES", "ASCEND_RT_VISIBLE_DEVICES", "MASTER_ADDR", "MASTER_PORT",
           "NODE_RANK", "OMP_NUM_THREADS", "PYTHONPATH", "WORLD_SIZE", "NNODES", "GPUS",
           "NPROC_PER_NODE", "ADDR", "PORT")

_STUB = """#!{python}
import json, os, sys
sys.argv[0] = os.path.basename(sys.argv[0])
sys.stdout.write({prints!r}.get(sys.argv[0], ""))
with open(os.environ["STUB_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps({{"name": sys.argv[0], "argv": sys.argv[1:], "cwd": os.getcwd(),
                          "env": {{k: os.environ.get(k) for k in {watched!r}}}}}) + "\\n")
outer = {outer!r}
if sys.argv[0] in outer:
    # srun's and mpirun's options that take a value in the next word.
    takes = outer[sys.argv[0]]
    args, i = sys.argv[1:], 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in takes else 1
    if i < len(args):
        os.execvp(args[i], args[i:])
"""

_OUTER = {
    "srun": ["-N", "-n", "-c", "-G", "-w", "-p", "-t", "-o", "-e", "-J", "--nodes", "--ntasks",
             "--ntasks-per-node", "--cpus-per-task", "--gpus-per-node", "--gres", "--mpi"],
    "mpirun": ["-np", "-n", "-N", "-H", "-x", "-hostfile", "--hostfile", "-npernode",
               "--map-by", "--bind-to"],
}


# Always stubbed: what must not run from a test (deleting, networking, installing, sleeping)
# and what a test machine may lack.
ALWAYS = ("rm", "sudo", "ssh", "scp", "pdsh", "curl", "wget", "pip", "git", "sleep",
          "nvidia-smi", "scontrol", "sbatch", "hostname")


@dataclass(frozen=True)
class Call:
    name: str
    argv: list[str]
    cwd: str
    env: dict[str, str | None]


def bash() -> str | None:
    return shutil.which("bash")


def run(script: Path, stubs: Iterable[str], work: Path, *,
        env: Mapping[str, str] | None = None, prints: Mapping[str, str] | None = None,
        timeout: float = 60) -> list[Call]:
    """Run ``script`` with bash in ``work``, the programs ``stubs`` stubbed (``prints``:
    what a stub writes to its output); their calls."""
    bin_dir = work / ".stubs"
    bin_dir.mkdir(exist_ok=True)
    for name in {*ALWAYS, *stubs}:
        path = bin_dir / name
        path.write_text(_STUB.format(python=sys.executable, watched=WATCHED, outer=_OUTER,
                                     prints=dict(prints or {})), encoding="utf-8")
        path.chmod(0o755)
    log = work / ".stub-log.jsonl"
    log.write_text("", encoding="utf-8")
    full = {**stub_env(work), **(env or {}), "STUB_LOG": str(log)}
    bash_path = bash()
    assert bash_path is not None
    subprocess.run([bash_path, str(script)], cwd=work, env=full, timeout=timeout,
                   capture_output=True, check=False, stdin=subprocess.DEVNULL)
    return [Call(**json.loads(line)) for line in log.read_text(encoding="utf-8").splitlines()]


def stub_env(work: Path) -> dict[str, str]:
    """The whole environment the script runs in (the plan is given the same)."""
    return {"PATH": f"{work / '.stubs'}{os.pathsep}/usr/bin{os.pathsep}/bin",
            "HOME": str(work), "LANG": "C.UTF-8"}

"""Launch plan + chosen ranks -> the process to start, and how a debugger reaches each rank.

The user's command is kept as written: nothing is inserted into argv. The chosen ranks get
their debugger from the bootstrap (``rankdebug.runtime.bootstrap``), which the job finds on
``PYTHONPATH`` in a private boot folder; every setting it needs travels in ``RANKDEBUG_*``
environment variables (listed in ``rankdebug.runtime.debug``).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rankdebug.command.plan import LaunchPlan
from rankdebug.runtime import bootstrap

# Where each launcher family puts a process's rank (see rankdebug.runtime.bootstrap).
_TORCH_VARS, _MPI_VARS = bootstrap.TORCH_VARS, bootstrap.MPI_VARS
RANK_VARS: dict[str, str] = {
    "torchrun": _TORCH_VARS,
    "torch.distributed.launch": _TORCH_VARS,
    "deepspeed": _TORCH_VARS,
    "accelerate": _TORCH_VARS,
    "llamafactory-cli": _TORCH_VARS,
    "colossalai": _TORCH_VARS,
    "ray": _TORCH_VARS,
    "mpirun": f"{_TORCH_VARS},{_MPI_VARS}",
    "srun": f"{_TORCH_VARS},{bootstrap.SLURM_VARS}",
    "msrun": bootstrap.MINDSPORE_VARS,
    "python": f"{_TORCH_VARS},=0",
    "other": f"{_TORCH_VARS},{_MPI_VARS}",
}

# The NCCL watchdog would kill peers of a paused rank; unless the user chose otherwise.
NCCL_ENV = {"TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC": "86400", "TORCH_NCCL_ENABLE_MONITORING": "0"}


class RewriteError(ValueError):
    """The plan cannot be run as is (for example: words whose value is unknown); ``line``
    and ``column`` (1-based) point at the first offending word when it is known."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None):
        super().__init__(message)
        self.message, self.line, self.column = message, line, column


@dataclass
class DebugPlan:
    """What ``rankdebug launch`` starts, and where each chosen rank will listen."""

    argv: list[str]
    env: dict[str, str]
    cwd: str
    launcher: str
    rank_spec: str
    chosen: list[int] | None
    host: str
    ports: dict[int, int] = field(default_factory=dict)

    def attach_configs(self, job: str) -> list[dict[str, object]]:
        """One ``rankdebug`` attach configuration per chosen rank with a known port."""
        return [
            {
                "type": "rankdebug",
                "request": "attach",
                "name": f"rank {rank}",
                "connect": {"host": self.host, "port": port},
                "job": job,
                "ranks": [rank],
            }
            for rank, port in sorted(self.ports.items())
        ]

    def compound(self, job: str) -> dict[str, object]:
        return {
            "name": f"job {job}",
            "configurations": [c["name"] for c in self.attach_configs(job)],
            "stopAll": True,
        }


def command_argv(plan: LaunchPlan) -> list[str]:
    """The plan's argv as strings; refuses words whose value is not known."""
    unknown = [(i, w) for i, w in enumerate(plan.argv) if w.value is None]
    if unknown:
        where = ", ".join(f"{w.display!r} (word {i + 1})" for i, w in unknown)
        first = unknown[0][1].span
        raise RewriteError(f"the command has words whose value is unknown here: {where}",
                           first.start_line + 1, first.start_col + 1)
    if not plan.argv:
        raise RewriteError("the command is empty")
    return [w.value for w in plan.argv if w.value is not None]


def command_env(plan: LaunchPlan, base: Mapping[str, str]) -> dict[str, str]:
    """``base`` (the caller's environment) plus the script's exports and inline assignments."""
    env = dict(base)
    for layer in (plan.script_env, plan.env):
        unknown = [name for name, w in layer.items() if w.value is None]
        if unknown:
            raise RewriteError(
                "the command sets variables whose value is unknown here: " + ", ".join(unknown)
            )
        env.update({name: w.value for name, w in layer.items() if w.value is not None})
    return env


def package_dir(module: str) -> str:
    """The folder of an importable package, e.g. ``debugpy``."""
    import importlib.util

    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise RewriteError(f"cannot find the {module} package")
    return str(next(iter(spec.submodule_search_locations)))


def prepare_boot_dir(boot: Path) -> tuple[Path, Path]:
    """Fill ``boot`` (private, created here): ``sitecustomize.py`` (the bootstrap), a link to
    the ``rankdebug`` package, and ``dbg/debugpy``, a link the chosen ranks alone put on
    sys.path. Returns (folder for PYTHONPATH, folder holding debugpy)."""
    boot.mkdir(mode=0o700, parents=True, exist_ok=True)
    here = Path(__file__).resolve().parent.parent
    shutil.copyfile(here / "runtime" / "bootstrap.py", boot / "sitecustomize.py")
    (boot / "rankdebug").symlink_to(here, target_is_directory=True)
    dbg = boot / "dbg"
    dbg.mkdir(mode=0o700)
    (dbg / "debugpy").symlink_to(package_dir("debugpy"), target_is_directory=True)
    return boot, dbg


def build(
    plan: LaunchPlan,
    *,
    rank_spec: str,
    chosen: list[int] | None,
    job: str,
    boot: Path,
    debugpy_dir: Path,
    ctl: str | None,
    host: str = "127.0.0.1",
    ports: Mapping[int, int] | None = None,
    base_port: int = 0,
    wait: bool = True,
    timeout: float = 86400.0,
    breaks: Sequence[tuple[str, int]] = (),
    attach: str = "start",
    base_env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    arm: str | None = None,
) -> DebugPlan:
    """The process to start for ``plan`` with ``chosen`` ranks under the debugger."""
    import json

    argv = command_argv(plan)
    env = command_env(plan, os.environ if base_env is None else base_env)
    user_set = set(env)
    paths = [str(boot)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env.update(
        {
            "RANKDEBUG_JOB": job,
            "RANKDEBUG_RANKS": rank_spec,
            "RANKDEBUG_RANKVARS": RANK_VARS.get(plan.launcher, RANK_VARS["other"]),
            "RANKDEBUG_HOST": host,
            "RANKDEBUG_PORTS": ",".join(f"{r}:{p}" for r, p in sorted((ports or {}).items())),
            "RANKDEBUG_BASE_PORT": str(base_port),
            "RANKDEBUG_WAIT": "1" if wait else "0",
            "RANKDEBUG_TIMEOUT": str(timeout),
            "RANKDEBUG_DEBUGPY": str(debugpy_dir),
            "RANKDEBUG_ADAPTER_PYTHON": sys.executable,
            "RANKDEBUG_ATTACH": attach,
        }
    )
    env.pop("RANKDEBUG_ACTED", None)
    if ctl:
        env["RANKDEBUG_CTL"] = ctl
    if arm:
        env["RANKDEBUG_ARM"] = arm  # the folder for every rank's control socket
    if breaks:
        env["RANKDEBUG_BREAKS"] = json.dumps([[f, n] for f, n in breaks])
    if timeout > 0:
        for name, value in NCCL_ENV.items():
            if name not in user_set:
                env[name] = value
    return DebugPlan(
        argv=argv,
        env=env,
        cwd=plan.cwd or cwd or os.getcwd(),
        launcher=plan.launcher,
        rank_spec=rank_spec,
        chosen=chosen,
        host=host,
        ports=dict(ports or {}),
    )

"""What the supervisor starts for a debug plan: the user's command as written (nothing is
inserted into argv) and its environment, which carries every setting the ranks' bootstrap
needs in ``RANKDEBUG_*`` variables (read by ``rankdebug.runtime.debug``) and puts a private
boot folder (``sitecustomize.py`` = ``rankdebug.runtime.bootstrap``) first on PYTHONPATH.
Pure: the places (``JobPlaces``: the job's id, folders and ports) come in, made by the
supervisor (``supervise.boot``, ``supervise.ports``); nothing here touches a file.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rankdebug import launcher_table
from rankdebug.command.plan import LaunchPlan
from rankdebug.debugplan.configs import attach_configurations
from rankdebug.debugplan.model import DebugPlan
from rankdebug.debugplan.options import StopMode
from rankdebug.errors import BadInput

# The NCCL watchdog would kill peers of a paused rank; unless the user chose otherwise.
NCCL_ENV = {"TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC": "86400", "TORCH_NCCL_ENABLE_MONITORING": "0"}


class UnrunnableError(BadInput):
    """The plan cannot be run as is (for example: words whose value is unknown)."""


@dataclass(frozen=True)
class JobPlaces:
    """Where one job lives: its id, its registry folder and what was made there."""

    job: str
    boot: Path  # on PYTHONPATH: sitecustomize.py and the rankdebug package
    debugpy_dir: Path  # holds debugpy; only chosen ranks put it on sys.path
    ctl: str | None = None  # the supervisor's control socket
    arm_dir: str | None = None  # where armed ranks make their sockets
    ports: Mapping[int, int] = field(default_factory=dict)


@dataclass
class JobRun:
    """The process ``rankdebug launch`` starts, and where each chosen rank will listen."""

    argv: list[str]
    env: dict[str, str]
    cwd: str
    launcher: str
    rank_spec: str
    chosen: list[int] | None
    host: str
    ports: dict[int, int] = field(default_factory=dict)
    # ``--break`` lines (real paths): the gates merge them into each client's breakpoints.
    breaks: list[tuple[str, int]] = field(default_factory=list)
    stop: StopMode = "together"  # what the other chosen ranks do when one stops

    def attach_configs(self, job: str) -> list[dict[str, object]]:
        """One ``rankdebug`` attach configuration per chosen rank with a known port."""
        return attach_configurations(sorted(self.ports), self.host, self.ports, job)


def command_argv(plan: LaunchPlan) -> list[str]:
    """The plan's argv as strings; refuses words whose value is not known."""
    unknown = [(i, w) for i, w in enumerate(plan.argv) if w.value is None]
    if unknown:
        where = ", ".join(f"{w.display!r} (word {i + 1})" for i, w in unknown)
        first = unknown[0][1].span
        raise UnrunnableError(f"the command has words whose value is unknown here: {where}",
                           first.start_line + 1, first.start_col + 1)
    if not plan.argv:
        raise UnrunnableError("the command is empty")
    return [w.value for w in plan.argv if w.value is not None]


def command_env(plan: LaunchPlan, base: Mapping[str, str]) -> dict[str, str]:
    """``base`` (the caller's environment) plus the script's exports and inline assignments."""
    env = dict(base)
    for layer in (plan.script_env, plan.env):
        unknown = [name for name, w in layer.items() if w.value is None]
        if unknown:
            raise UnrunnableError(
                "the command sets variables whose value is unknown here: " + ", ".join(unknown)
            )
        env.update({name: w.value for name, w in layer.items() if w.value is not None})
    return env


def _rank_vars(dplan: DebugPlan) -> str:
    """Where ranks find their numbers; a launcher that runs the one rank in its own process
    (``in_launcher``) is rank 0 without any."""
    found = launcher_table.get(dplan.plan.launcher).rank_vars
    if dplan.plan.world_size == 1 and any(d.code == "rank-in-child"
                                          for d in dplan.plan.diagnostics):
        return f"{found},=0^"  # the one rank is the launcher's child python
    return f"{found},=0" if dplan.plan.in_launcher else found


def rank_settings(dplan: DebugPlan, places: JobPlaces) -> dict[str, str]:
    """The ``RANKDEBUG_*`` variables of a job (see ``rankdebug.runtime.debug``)."""
    opts = dplan.options
    env = {
        "RANKDEBUG_JOB": places.job,
        "RANKDEBUG_RANKS": dplan.selection.spec,
        "RANKDEBUG_RANKVARS": _rank_vars(dplan),
        "RANKDEBUG_HOST": opts.host,
        "RANKDEBUG_PORTS": ",".join(f"{r}:{p}" for r, p in sorted(places.ports.items())),
        "RANKDEBUG_WAIT": "1" if opts.wait else "0",
        "RANKDEBUG_TIMEOUT": str(opts.timeout),
        "RANKDEBUG_DEBUGPY": str(places.debugpy_dir),
        "RANKDEBUG_ADAPTER_PYTHON": sys.executable,
        "RANKDEBUG_ATTACH": opts.attach_mode,
    }
    if places.ctl:
        env["RANKDEBUG_CTL"] = places.ctl
    if places.arm_dir:
        env["RANKDEBUG_ARM"] = places.arm_dir  # the folder for every rank's control socket
    if opts.breaks:
        env["RANKDEBUG_BREAKS"] = json.dumps([[f, n] for f, n in dplan.breaks])
    return env


def job_run(dplan: DebugPlan, places: JobPlaces,
            base_env: Mapping[str, str] | None = None) -> JobRun:
    """The process to start for ``dplan`` in ``places``: the command, in its environment
    plus the bootstrap's settings."""
    env = command_env(dplan.plan, os.environ if base_env is None else base_env)
    user_set = set(env)
    paths = [str(places.boot)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env.pop("RANKDEBUG_ACTED", None)
    env.update(rank_settings(dplan, places))
    if dplan.options.timeout > 0:
        env.update({k: v for k, v in NCCL_ENV.items() if k not in user_set})
    env.update({k: v for k, v in launcher_table.get(dplan.plan.launcher).debug_env
                if k not in user_set})
    return JobRun(
        argv=command_argv(dplan.plan),
        env=env,
        cwd=dplan.run_cwd,
        launcher=dplan.plan.launcher,
        rank_spec=dplan.selection.spec,
        chosen=dplan.selection.ranks,
        host=dplan.options.host,
        ports=dict(places.ports),
        breaks=list(dplan.breaks),
        stop=dplan.options.stop,
    )

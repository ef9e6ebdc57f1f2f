"""Launch configurations for a plan: what ``rankdebug.debugPlan`` hands the extension and
what ``rankdebug.launchJson`` offers to merge into ``.vscode/launch.json``.

Two debug types are served:

- ``rankdebug`` (this extension): a ``launch`` configuration running the command, and
  per-rank ``attach`` configurations with a compound.
- ``debugpy`` (Microsoft's Python Debugger), for users without this extension's debug
  type: per-rank ``attach`` configurations on known ports plus a compound, and the
  "seed" configuration that runs the whole launcher under debugpy with ``subProcess``
  (every rank is then debugged; no ``rankdebug`` needed).

Ports: ``rankdebug launch --base-port B --ranks R`` gives the i-th chosen rank (in rank
order) port B + i when those ports are free, so the attach configurations use that.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rankdebug.command.plan import LaunchPlan
from rankdebug.command.words import Word

# Launchers that can run as `python -m MODULE`, for the seed-style debugpy configuration.
PYTHON_MODULE_FORM = {
    "torchrun": "torch.distributed.run",
    "torch.distributed.launch": "torch.distributed.launch",
    "deepspeed": "deepspeed.launcher.runner",
    "accelerate": "accelerate.commands.launch",
}
_SIMPLE_VAR = re.compile(r"^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))$")


@dataclass
class Launch:
    """How the job is started: the `rankdebug launch` argv and where it runs."""

    argv: list[str]
    env: dict[str, str]
    cwd: str
    rank_spec: str
    ranks: list[int] | None
    host: str
    base_port: int
    warnings: list[str] = field(default_factory=list)


def title_of(plan: LaunchPlan) -> str:
    """A short name for configurations: the entry's file or module name."""
    if plan.entry is not None:
        target = plan.entry.target.display
        return os.path.basename(target.rstrip("/")) or target
    return plan.launcher


def attach_rankdebug(plan: LaunchPlan, ranks: Sequence[int], host: str,
                     ports: Mapping[int, int] | None, job: str | None) -> list[dict[str, Any]]:
    """Per-rank ``rankdebug`` attach configurations (``connect`` when the port is known)."""
    out: list[dict[str, Any]] = []
    for rank in ranks:
        conf: dict[str, Any] = {
            "type": "rankdebug",
            "request": "attach",
            "name": f"rank {rank}",
            "ranks": [rank],
            "job": job,
        }
        if ports and rank in ports:
            conf["connect"] = {"host": host, "port": ports[rank]}
        out.append(conf)
    return out


def compound(name: str, configs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return {"name": name, "configurations": [c["name"] for c in configs], "stopAll": True}


def known_env(layers: Sequence[Mapping[str, Word]], warnings: list[str]) -> dict[str, str]:
    """Known values of environment layers (later wins); unknown ones become
    ``${env:NAME}`` when they are just another variable, else are left out with a warning."""
    env: dict[str, str] = {}
    for layer in layers:
        for name, word in layer.items():
            if word.value is not None:
                env[name] = word.value
                continue
            m = _SIMPLE_VAR.match(word.display.strip())
            if m:
                env[name] = "${env:" + (m.group(1) or m.group(2)) + "}"
            else:
                warnings.append(f"{name}={word.display} is not known here; it is left out")
    return env


def _argv_values(words: Sequence[Word], warnings: list[str]) -> list[str] | None:
    out: list[str] = []
    for w in words:
        if w.value is not None:
            out.append(w.value)
            continue
        m = _SIMPLE_VAR.match(w.display.strip())
        if m is None:
            warnings.append(f"{w.display} is not known here")
            return None
        out.append("${env:" + (m.group(1) or m.group(2)) + "}")
    return out


def _folder_relative(path: str | None, workspace: str | None) -> str:
    if not path:
        return "${workspaceFolder}"
    if workspace:
        try:
            rel = os.path.relpath(path, workspace)
        except ValueError:
            return path
        if rel == ".":
            return "${workspaceFolder}"
        if not rel.startswith(".."):
            return "${workspaceFolder}/" + rel
    return path


def launcher_args(plan: LaunchPlan) -> list[Word] | None:
    """The launcher's own arguments onward (entry and its arguments included)."""
    try:
        from rankdebug.command.launchers import find_launcher, unwrap
    except ImportError:
        return None
    start, _ = unwrap(plan.argv)
    found = find_launcher(plan.argv, start)
    if found is None or plan.launcher != found[0].NAME:
        return None
    return list(plan.argv[found[1]:])


def seed_config(plan: LaunchPlan, env: Mapping[str, str], cwd: str,
                warnings: list[str]) -> dict[str, Any] | None:
    """The whole launcher under debugpy with ``subProcess`` (or the script, for python)."""
    name = f"{title_of(plan)}: whole job (debugpy)"
    base: dict[str, Any] = {"type": "debugpy", "request": "launch", "name": name}
    if plan.launcher == "python":
        entry = plan.entry
        if entry is None or entry.kind == "cli":
            return None
        target = _argv_values([entry.target], warnings)
        args = _argv_values(plan.entry_args, warnings)
        if target is None or args is None:
            return None
        base["module" if entry.kind == "module" else "program"] = target[0]
        base.update({"args": args, "cwd": cwd, "env": dict(env), "console": "integratedTerminal",
                     "justMyCode": False})
        return base
    module = PYTHON_MODULE_FORM.get(plan.launcher)
    if module is None:
        warnings.append(f"{plan.launcher} has no `python -m` form: no whole-job debugpy "
                        "configuration")
        return None
    words = launcher_args(plan)
    if words is None:
        warnings.append("the launcher's arguments could not be found: no whole-job debugpy "
                        "configuration")
        return None
    args = _argv_values(words, warnings)
    if args is None:
        return None
    base.update({
        "module": module,
        "args": args,
        "cwd": cwd,
        "env": dict(env),
        "console": "integratedTerminal",
        "subProcess": True,
        "justMyCode": False,
    })
    return base


def launch_json(
    plan: LaunchPlan,
    *,
    chosen: Sequence[int],
    rank_spec: str,
    terminal_argv: list[str],
    host: str,
    base_port: int,
    workspace: str | None,
    command_text: str | None,
    extra_env: Mapping[str, str],
) -> dict[str, Any]:
    """Configurations and compounds to merge into launch.json, and the command that starts
    the job so that the attach configurations find their ranks."""
    warnings: list[str] = []
    title = title_of(plan)
    env = {**known_env([plan.script_env, plan.env], warnings), **extra_env}
    cwd = _folder_relative(plan.cwd, workspace)
    configs: list[dict[str, Any]] = []
    compounds: list[dict[str, Any]] = []

    argv = _argv_values(plan.argv, [])
    launch: dict[str, Any] = {
        "type": "rankdebug",
        "request": "launch",
        "name": f"{title}: debug ranks {rank_spec}",
        # The argv when every word is known; else the command as written (read by the
        # engine, never by a shell).
        "command": argv if argv is not None and "${env:" not in " ".join(argv)
        else (command_text or " ".join(w.display for w in plan.argv)),
        "cwd": cwd,
        "env": env if argv is not None else known_env([plan.script_env], []) | dict(extra_env),
        "ranks": rank_spec,
    }
    configs.append(launch)

    ports = {rank: base_port + i for i, rank in enumerate(sorted(chosen))}
    ours = [
        {**c, "name": f"{title}: rank {c['ranks'][0]} (rankdebug)"}
        for c in attach_rankdebug(plan, sorted(chosen), host, ports, None)
    ]
    for c in ours:
        c.pop("job", None)
    theirs = [
        {
            "type": "debugpy",
            "request": "attach",
            "name": f"{title}: rank {rank} (debugpy, port {ports[rank]})",
            "connect": {"host": host, "port": ports[rank]},
            "justMyCode": False,
        }
        for rank in sorted(chosen)
    ]
    configs += ours + theirs
    if ours:
        compounds.append(compound(f"{title}: ranks {rank_spec} (rankdebug)", ours))
        compounds.append(compound(f"{title}: ranks {rank_spec} (debugpy)", theirs))
    seed = seed_config(plan, env, cwd, warnings)
    if seed is not None:
        configs.append(seed)
    return {
        "configurations": configs,
        "compounds": compounds,
        "terminalCommand": terminal_argv,
        "warnings": warnings,
    }

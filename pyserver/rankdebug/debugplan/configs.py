"""Launch configurations of a debug plan: the per-rank ``rankdebug`` attach configurations
and their compound, and what ``rankdebug.launchJson`` offers to merge into
``.vscode/launch.json``.

Two debug types are served there:

- ``rankdebug`` (this extension): a ``launch`` configuration running the command, and
  per-rank ``attach`` configurations with a compound.
- ``debugpy`` (Microsoft's Python Debugger), for users without this extension's debug
  type: per-rank ``attach`` configurations on known ports plus a compound, and the
  "seed" configuration that runs the whole launcher under debugpy with ``subProcess``
  (every rank is then debugged; no ``rankdebug`` needed).

Ports: ``rankdebug launch --base-port B --ranks R`` gives the i-th chosen rank (in rank
order) port B + i when those ports are free, so the launch.json attach configurations use
that.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from rankdebug import launcher_table
from rankdebug.command.launchers import find_launcher, unwrap
from rankdebug.command.plan import LaunchPlan
from rankdebug.command.words import Word

_SIMPLE_VAR = re.compile(r"^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))$")


def title_of(plan: LaunchPlan) -> str:
    """A short name for configurations: the entry's file or module name."""
    if plan.entry is not None:
        target = plan.entry.target.display
        return os.path.basename(target.rstrip("/")) or target
    return plan.launcher


def attach_configurations(ranks: Sequence[int], host: str, ports: Mapping[int, int] | None,
                          job: str | None) -> list[dict[str, Any]]:
    """One ``rankdebug`` attach configuration per rank, named ``rank N`` (with ``connect``
    when its port is known)."""
    out: list[dict[str, Any]] = []
    for rank in ranks:
        conf: dict[str, Any] = {"type": "rankdebug", "request": "attach", "name": f"rank {rank}"}
        if ports and rank in ports:
            conf["connect"] = {"host": host, "port": ports[rank]}
        conf.update({"job": job, "ranks": [rank]})
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


def argv_values(words: Sequence[Word], warnings: list[str]) -> list[str] | None:
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


def folder_relative(path: str | None, workspace: str | None) -> str:
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
    start, _ = unwrap(plan.argv)
    found = find_launcher(plan.argv, start)
    if found is None or plan.launcher != found[0].NAME:
        return None
    return list(plan.argv[found[1]:])


def _program(plan: LaunchPlan, warnings: list[str]) -> dict[str, Any] | None:
    """What a plain ``python`` command runs: ``program`` or ``module``, and ``args``."""
    entry = plan.entry
    if entry is None or entry.kind == "cli":
        return None
    target = argv_values([entry.target], warnings)
    args = argv_values(plan.entry_args, warnings)
    if target is None or args is None:
        return None
    return {"module" if entry.kind == "module" else "program": target[0], "args": args}


def _launcher_module(plan: LaunchPlan, warnings: list[str]) -> dict[str, Any] | None:
    """A launcher run as ``python -m MODULE`` with its own arguments, in subprocess mode."""
    module = launcher_table.python_module(plan.launcher)
    if module is None:
        warnings.append(f"{plan.launcher} has no `python -m` form: no whole-job debugpy "
                        "configuration")
        return None
    words = launcher_args(plan)
    if words is None:
        warnings.append("the launcher's arguments could not be found: no whole-job debugpy "
                        "configuration")
        return None
    args = argv_values(words, warnings)
    return None if args is None else {"module": module, "args": args, "subProcess": True}


def seed_config(plan: LaunchPlan, env: Mapping[str, str], cwd: str,
                warnings: list[str]) -> dict[str, Any] | None:
    """The whole launcher under debugpy with ``subProcess`` (or the script, for python)."""
    runs = (_program if plan.launcher == "python" else _launcher_module)(plan, warnings)
    if runs is None:
        return None
    subprocess = runs.pop("subProcess", None)
    out: dict[str, Any] = {"type": "debugpy", "request": "launch",
                           "name": f"{title_of(plan)}: whole job (debugpy)", **runs,
                           "cwd": cwd, "env": dict(env), "console": "integratedTerminal"}
    if subprocess:
        out["subProcess"] = True
    out["justMyCode"] = False
    return out

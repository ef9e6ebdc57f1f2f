"""A debug plan as ``.vscode/launch.json`` entries: the ``rankdebug.launchJson`` reply."""

from __future__ import annotations

from typing import Any

from rankdebug.debugplan.configs import (
    argv_values,
    attach_configurations,
    compound,
    folder_relative,
    known_env,
    seed_config,
)
from rankdebug.debugplan.model import DebugPlan
from rankdebug.errors import BadInput
from rankdebug.runtime.port_rule import port_of


def launch_json(dplan: DebugPlan, *, workspace: str | None,
                extra_env: dict[str, str]) -> dict[str, Any]:
    """Configurations and compounds to merge into launch.json, and the command that starts
    the job so that the attach configurations find their ranks (on ports base, base+1, …)."""
    plan, spec, title = dplan.plan, dplan.selection.spec, dplan.title
    chosen = dplan.selection.ranks
    if chosen is None:
        raise BadInput(f"ranks {spec!r} cannot be resolved to rank numbers here; give the "
                       "ranks as numbers")
    warnings: list[str] = []
    env = {**known_env([plan.script_env, plan.env], warnings), **extra_env}
    cwd = folder_relative(plan.cwd, workspace)
    argv = argv_values(plan.argv, [])
    launch: dict[str, Any] = {
        "type": "rankdebug",
        "request": "launch",
        "name": f"{title}: debug ranks {spec}",
        # The argv when every word is known; else the command as written (read by the
        # engine, never by a shell).
        "command": argv if argv is not None and "${env:" not in " ".join(argv)
        else (dplan.origin.lines(plan.span.start_line, plan.span.end_line)
              or " ".join(w.display for w in plan.argv)),
        "cwd": cwd,
        "env": env if argv is not None else known_env([plan.script_env], []) | extra_env,
        "ranks": spec,
    }
    host, base = dplan.options.host, dplan.options.base_port
    # The ports the supervisor offers first (supervise/ports.choose): those free at launch.
    ports = {rank: port_of(base, i) for i, rank in enumerate(sorted(chosen))}
    ours = [
        {**c, "name": f"{title}: rank {c['ranks'][0]} (rankdebug)"}
        for c in attach_configurations(sorted(chosen), host, ports, None)
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
    configs: list[dict[str, Any]] = [launch, *ours, *theirs]
    compounds = []
    if ours:
        compounds.append(compound(f"{title}: ranks {spec} (rankdebug)", ours))
        compounds.append(compound(f"{title}: ranks {spec} (debugpy)", theirs))
    seed = seed_config(plan, env, cwd, warnings)
    if seed is not None:
        configs.append(seed)
    return {
        "configurations": configs,
        "compounds": compounds,
        "terminalCommand": list(dplan.argv),
        "warnings": warnings,
    }

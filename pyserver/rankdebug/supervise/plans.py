"""The launch plan for ``rankdebug launch``: from the command engine (``rankdebug.command``)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from rankdebug.command import plan_argv, plan_file
from rankdebug.command.plan import LaunchPlan


def plan_for(
    argv: Sequence[str] | None,
    file: str | None,
    line: int | None,
    *,
    caller_env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> LaunchPlan:
    """The plan of ``argv``, or of the command at ``line`` of ``file``.

    Raises ``rankdebug.command.CommandError`` on input the engine cannot read.
    """
    env = dict(os.environ if caller_env is None else caller_env)
    if file is not None:
        plan: LaunchPlan = plan_file(Path(file), int(line or 1), caller_env=env, cwd=cwd)
    else:
        plan = plan_argv(list(argv or []), caller_env=env, cwd=cwd)
    return plan

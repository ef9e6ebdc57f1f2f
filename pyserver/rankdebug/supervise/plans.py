"""The launch plan for ``rankdebug launch``: from the command engine (``rankdebug.command``)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from rankdebug.command.plan import LaunchPlan
from rankdebug.command.words import Span, Word


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
    try:
        from rankdebug.command import plan_argv, plan_file  # type: ignore[attr-defined,unused-ignore]
    except ImportError:  # the engine has not landed yet: argv only, as written
        if file is not None:
            raise
        return literal_plan(list(argv or []), cwd)
    if file is not None:
        plan: LaunchPlan = plan_file(Path(file), int(line or 1), caller_env=env, cwd=cwd)
    else:
        plan = plan_argv(list(argv or []), caller_env=env, cwd=cwd)
    return plan


def literal_plan(argv: list[str], cwd: Path | None = None) -> LaunchPlan:
    """A plan that knows nothing but the words (launcher from the first word, sizes unknown)."""
    words = [Word.literal(a, Span(0, 0, 0, 0)) for a in argv]
    first = os.path.basename(argv[0]) if argv else ""
    launcher = "other"
    if first == "torchrun" or argv[1:3] == ["-m", "torch.distributed.run"]:
        launcher = "torchrun"
    elif argv[1:3] == ["-m", "torch.distributed.launch"]:
        launcher = "torch.distributed.launch"
    elif first.startswith("python"):
        launcher = "python"
    elif first in ("mpirun", "mpiexec"):
        launcher = "mpirun"
    elif first in ("srun", "deepspeed", "accelerate", "msrun", "llamafactory-cli", "colossalai"):
        launcher = first
    plan = LaunchPlan(launcher=launcher, argv=words, span=Span(0, 0, 0, 0))
    plan.cwd = str(cwd) if cwd else None
    return plan

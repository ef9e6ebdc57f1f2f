"""``python -m torch.distributed.launch``: torchrun's options plus ``--use-env``.

torch/distributed/launch.py builds on torchrun's parser; without ``--use-env`` the
launcher appends ``--local-rank=N`` to each worker's arguments (entry_args are kept
as written; an info diagnostic says so).
"""

from __future__ import annotations

from collections.abc import Sequence

from rankdebug import launcher_table
from rankdebug.command.launchers.base import Context
from rankdebug.command.launchers.common import program_or_module
from rankdebug.command.launchers.torchrun import OPTIONS, parse_torch
from rankdebug.command.options import Spec, both_flag
from rankdebug.command.words import Word

ROW = launcher_table.BY_NAME["torch.distributed.launch"]
NAME = ROW.name

SPEC = Spec(
    NAME,
    (*OPTIONS, both_flag("use_env", "Pass the local rank in LOCAL_RANK, not --local-rank.")),
    abbrev=True,
    argparse=True,
)


def matches(argv: Sequence[Word]) -> int | None:
    return program_or_module(argv, ROW)


def parse(ctx: Context, start: int) -> None:
    plan = ctx.plan
    parse_torch(ctx, start, SPEC)
    if not any(use.name == "use_env" for use in plan.options):
        span = plan.argv[start - 1].span if start > 0 else plan.span
        plan.warn(
            "torch.distributed.launch appends --local-rank=N to the script's arguments; "
            "add --use-env to pass it in LOCAL_RANK instead",
            span,
            severity="info",
            code="local-rank-arg",
        )

"""Hugging Face's TPU launcher: ``python xla_spawn.py --num_cores N SCRIPT ARGS``
(transformers' examples/pytorch/xla_spawn.py, and its copies).

Its options are its ``parse_args()``: argparse with abbreviations, ``--num_cores`` (default
1), then the training script and its arguments (REMAINDER). It imports the script and runs
its ``_mp_fn`` in ``num_cores`` processes of this host with ``xmp.spawn``. torch_xla's PJRT
runtime (2.0 on) starts one process per TPU device instead whenever ``nprocs`` is more than
1 (and recent releases refuse such an ``nprocs``), which the plan says.
"""

from __future__ import annotations

from collections.abc import Sequence

from rankdebug import launcher_table
from rankdebug.command.launchers.base import Context
from rankdebug.command.launchers.common import (
    basename,
    is_python,
    launcher_entry,
    option_int,
    parse_python,
)
from rankdebug.command.options import Opt, Spec, parse_options, value
from rankdebug.command.words import Word

ROW = launcher_table.BY_NAME["xla_spawn"]
NAME = ROW.name
SCRIPT = "xla_spawn.py"

OPTIONS: tuple[Opt, ...] = (
    value("num_cores", "--num_cores", help="Number of TPU cores to use (1 or 8)."),
)

SPEC = Spec(NAME, OPTIONS, abbrev=True, argparse=True)


def matches(argv: Sequence[Word]) -> int | None:
    if not argv or not is_python(argv[0]):
        return None
    call = parse_python(argv, 1)
    if call.kind == "script" and call.target is not None and basename(call.target) == SCRIPT:
        return call.args_from
    return None


def parse(ctx: Context, start: int) -> None:
    plan = ctx.plan
    parsed = parse_options(plan, plan.argv, start, SPEC)
    here = plan.argv[start - 1].span
    cores = option_int(ctx, parsed, "num_cores", 1)
    plan.nnodes, plan.node_rank = 1, 0
    plan.nproc_per_node = plan.world_size = cores
    launcher_entry(plan, parsed, SCRIPT, "script")
    if plan.entry is not None:
        plan.warn(f"{SCRIPT} imports {plan.entry.target.display} and runs its _mp_fn in each "
                  "process", here, severity="info", code="entry-function")
    if cores is not None and cores > 1:
        plan.warn(f"torch_xla 2 (PJRT) ignores --num_cores {cores} and starts one process "
                  "per TPU device of this host (recent releases refuse it); torch_xla 1 "
                  f"starts {cores}", here, severity="info", code="runtime-decides")

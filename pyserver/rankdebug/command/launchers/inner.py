"""Launchers run by an outer launcher: ``srun ... torchrun ...``, ``mpirun -x A=1 deepspeed ...``.

When the command an outer launcher (srun, mpirun) runs is a launcher that starts the ranks
itself (``launcher_table.RANK_LAUNCHERS``), the plan is that inner launcher's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from rankdebug.command.launchers import (
    accelerate,
    axolotl,
    colossalai,
    composer,
    deepspeed,
    fabric,
    horovodrun,
    llamafactory,
    msrun,
    ray,
    swift,
    torch_launch,
    torchrun,
    torchtune,
    xla_spawn,
)
from rankdebug.command.launchers.base import Context, LauncherModule, first_match
from rankdebug.command.launchers.common import visible_devices
from rankdebug.command.launchers.wrappers import splice_code, unwrap
from rankdebug.command.plan import LaunchPlan
from rankdebug.command.words import Word
from rankdebug.launcher_table import RANK_LAUNCHERS

# The launchers that start ranks, in the order their `matches` are tried (before every
# other launcher's: `python -m torch.distributed.run` is torchrun's before it is python's).
RANK_MODULES: tuple[LauncherModule, ...] = (
    torchrun,
    torch_launch,
    deepspeed,
    accelerate,
    llamafactory,
    torchtune,
    swift,
    axolotl,
    composer,
    fabric,
    msrun,
    colossalai,
    ray,
    horovodrun,
    xla_spawn,
)


def launch_inner(
    ctx: Context, index: int, outer: str, env: Mapping[str, Word] | None = None
) -> bool:
    """If ``argv[index:]`` is a launcher that starts ranks, plan it instead of ``outer``.
    Shell code there (``srun bash -c "torchrun ..."``) is first replaced by the command it
    runs, for the outer launcher too."""
    if env:
        ctx = dataclasses.replace(ctx, env={**ctx.env, **env})
    ctx = splice_code(ctx, index) or ctx
    plan = ctx.plan
    argv = plan.argv
    at, assigned = unwrap(argv, index)
    found = first_match(RANK_MODULES, argv, at)
    if found is None or found[0].NAME not in RANK_LAUNCHERS:
        return False
    module, start = found
    _reset_numbers(plan)
    plan.launcher = module.NAME
    plan.warn(
        f"{outer} runs {module.NAME}; the ranks are the ones {module.NAME} starts",
        argv[at].span,
        severity="info",
        code="nested-launcher",
    )
    inner = dataclasses.replace(ctx, env={**ctx.env, **assigned})  # ctx.env holds env already
    plan.visible_devices = visible_devices(inner)
    module.parse(inner, start)
    return True


def _reset_numbers(plan: LaunchPlan) -> None:
    plan.nnodes = None
    plan.node_rank = None
    plan.nproc_per_node = None
    plan.world_size = None
    plan.nnodes_range = None
    plan.entry = None
    plan.entry_args = []
    plan.entry_index = None
    plan.master_addr = None
    plan.master_port = None

"""The parallel layout a launch plan's command gives, before anything runs.

One reader per framework, tried in this order (the first that finds its settings wins):
Megatron-LM/MindSpeed flags, torchtitan's TOML and overrides, verl's rollout overrides,
DeepSpeed (pipeline stages when given, else data parallel), accelerate's mode. Data
parallelism is what the other sizes leave of the world size. A running job's own mesh
(reported with its ranks) wins over this guess.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rankdebug.coords import accelerate, deepspeed, megatron, torchtitan, verl
from rankdebug.coords.layout import Layout, Mismatch

if TYPE_CHECKING:
    from rankdebug.command.plan import LaunchPlan

NOT_GIVEN = ("this command gives no parallel sizes (Megatron's --tensor-model-parallel-size "
             "and --pipeline-model-parallel-size, torchtitan's [parallelism], verl's "
             "actor_rollout_ref.rollout.tensor_model_parallel_size=, DeepSpeed or accelerate), "
             "and its world size must be known; give rank numbers (e.g. 0-3)")
_DEEPSPEED_FLAGS = ("--deepspeed", "--deepspeed_config", "--deepspeed-config")


def layout_of(plan: LaunchPlan) -> Layout | Mismatch | None:
    """The layout ``plan``'s command gives, a Mismatch when its sizes cannot fit its world
    size, or None when it names none (or its world size is not known)."""
    args = plan.entry_args
    world = plan.world_size
    # Words of a followed script (`bash train.sh`) were written in that script.
    file = plan.followed.rsplit(":", 1)[0] if plan.followed else None
    found = megatron.read(args, world, file)
    if found is None:
        found = torchtitan.read(args, world, file, plan.cwd)
    if found is None:
        found = verl.read(args, world, file)
    if found is None and (plan.launcher == "deepspeed"
                          or any(w.known_prefix.split("=")[0] in _DEEPSPEED_FLAGS
                                 for w in args)):
        entry = plan.entry.target.value if plan.entry and plan.entry.kind == "script" else None
        found = deepspeed.read(args, world, file, entry, plan.cwd)
    if found is None:
        found = accelerate.read(plan, file)
    return found


def why_unknown(plan: LaunchPlan) -> str:
    """Why ``plan`` has no layout, for a selector's error: its sizes do not fit its world,
    or it gives none."""
    found = layout_of(plan)
    if isinstance(found, Mismatch):
        return f"the command's parallel sizes do not fit its ranks: {found.message}"
    return NOT_GIVEN

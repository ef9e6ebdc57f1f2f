"""The parallel layout a launch plan's command gives, before anything runs.

One reader per framework, tried in this order (the first that finds its settings wins):
Megatron-LM/MindSpeed flags, torchtitan's TOML and overrides, verl's rollout overrides,
DeepSpeed (pipeline stages when given, else data parallel), accelerate's mode. Data
parallelism is what the other sizes leave of the world size. A running job's own mesh
(reported with its ranks) wins over this guess.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rankdebug.command.coords import accelerate, deepspeed, megatron, torchtitan, verl
from rankdebug.command.coords.layout import Layout, Mismatch
from rankdebug.command.words import Word

NOT_GIVEN = ("this command gives no parallel sizes (Megatron's --tensor-model-parallel-size "
             "and --pipeline-model-parallel-size, torchtitan's [parallelism], verl's "
             "actor_rollout_ref.rollout.tensor_model_parallel_size=, DeepSpeed or accelerate), "
             "and its world size must be known; give rank numbers (e.g. 0-3)")
_DEEPSPEED_FLAGS = ("--deepspeed", "--deepspeed_config", "--deepspeed-config")


@dataclass(frozen=True)
class Facts:
    """What a launch plan knows that a layout is read from (the plan hands these over, so
    this package never imports the plan)."""

    launcher: str
    # The launched program's arguments, as written.
    args: Sequence[Word]
    world: int | None
    # Where relative config paths resolve.
    cwd: str | None
    # The file the words were written in when not the command's own document.
    file: str | None = None
    # The entry script's path, when the entry is a script.
    script: str | None = None
    # The launcher's own options by name: value word, or None for a switch.
    options: Mapping[str, Word | None] = field(default_factory=dict)


def layout_of(facts: Facts) -> Layout | Mismatch | None:
    """The layout a command gives, a Mismatch when its sizes cannot fit its world size, or
    None when it names none (or its world size is not known)."""
    args, world, file = facts.args, facts.world, facts.file
    found = megatron.read(args, world, file)
    if found is None:
        found = torchtitan.read(args, world, file, facts.cwd)
    if found is None:
        found = verl.read(args, world, file)
    if found is None and (facts.launcher == "deepspeed"
                          or any(w.known_prefix.split("=")[0] in _DEEPSPEED_FLAGS
                                 for w in args)):
        found = deepspeed.read(args, world, file, facts.script, facts.cwd)
    if found is None and facts.launcher == "accelerate":
        found = accelerate.read(facts.options, world, file, facts.cwd)
    return found


def why_unknown(found: Layout | Mismatch | None) -> str:
    """Why there is no layout, for a selector's error: the sizes do not fit the world, or
    the command gives none."""
    if isinstance(found, Mismatch):
        return f"the command's parallel sizes do not fit its ranks: {found.message}"
    return NOT_GIVEN

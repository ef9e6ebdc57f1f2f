"""One module per launcher, turning an evaluated argv into a launch plan.

:func:`plan_argv` is the entry point: it skips wrapper commands (``env A=B``,
``nohup``, ``numactl ...``; see :func:`unwrap`), picks the first module in
:data:`MODULES` whose ``matches()`` accepts the command, and lets it fill the plan.
A command no module knows is launcher ``"other"``, its program the entry.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from rankdebug.command.launchers import (
    detectron2,
    lightning,
    litgpt,
    mpirun,
    python,
    srun,
    xtuner,
)
from rankdebug.command.launchers.base import Context, LauncherModule, first_match
from rankdebug.command.launchers.common import basename, set_entry, visible_devices, why
from rankdebug.command.launchers.inner import RANK_MODULES
from rankdebug.command.launchers.wrappers import Unwrapped, splice_code, unwrap, unwrap_full
from rankdebug.command.options import Spec
from rankdebug.command.words import Word
from rankdebug.launcher_table import OTHER

__all__ = [
    "MODULES",
    "Context",
    "LauncherModule",
    "Unwrapped",
    "find_launcher",
    "plan_argv",
    "spec_for",
    "unwrap",
    "unwrap_full",
]

# Order matters: the launchers that start ranks first (`python -m torch.distributed.run` is
# torchrun's before it is python's), python last.
MODULES: tuple[LauncherModule, ...] = (*RANK_MODULES, mpirun, srun, litgpt, xtuner,
                                        detectron2, lightning, python)

# Option tables, for hovers and completion (launchers without one have no SPEC).
_SPECS: dict[str, Spec] = {
    module.NAME: spec for module in MODULES
    if isinstance(spec := getattr(module, "SPEC", None), Spec)
}


def spec_for(launcher: str) -> Spec | None:
    """The option table of a launcher, for hovers and completion."""
    return _SPECS.get(launcher)


def find_launcher(argv: Sequence[Word], at: int) -> tuple[LauncherModule, int] | None:
    """The module for the command at ``argv[at:]`` and the absolute index of its arguments."""
    return first_match(MODULES, argv, at)


# -- planning ----------------------------------------------------------------------


def plan_argv(ctx: Context) -> None:
    """Fill ``ctx.plan`` from ``ctx.plan.argv``.

    Assignments made by ``env A=B`` (or ``sudo A=B``) go into ``plan.env`` and are
    seen by the launcher; ``env -i`` and ``env -u X`` take variables away from it.
    Shell code run from words (``eval "$CMD"``, ``bash -c CODE``) is planned as the
    command it runs (see :func:`splice_code`).
    """
    plan = ctx.plan
    argv = plan.argv
    wrapped = unwrap_full(argv, 0)
    if wrapped.env or wrapped.unset or wrapped.clear_env:
        base = {} if wrapped.clear_env else {
            k: v for k, v in ctx.env.items() if k not in wrapped.unset
        }
        ctx = dataclasses.replace(ctx, env={**base, **wrapped.env})
        for key in wrapped.unset:
            plan.env.pop(key, None)
        plan.env.update(wrapped.env)
    spliced = splice_code(ctx, wrapped.index)
    if spliced is not None:
        # The code's command is planned in its place (its own code already read).
        plan_argv(dataclasses.replace(spliced, inline=None))
        return
    plan.visible_devices = visible_devices(ctx)
    found = find_launcher(argv, wrapped.index)
    if found is None and wrapped.index < len(argv) and python.spawning_script(
        ctx, argv[wrapped.index]
    ):
        # `./train_net.py --num-gpus 8`: a script run by its #! line.
        at = wrapped.index
        set_entry(plan, "script", argv[at], at, at + 1)
        detectron2.parse(ctx, at + 1)
        return
    if found is None:
        plan.launcher = OTHER
        if wrapped.index < len(argv):
            prog = argv[wrapped.index]
            set_entry(plan, "cli", prog, wrapped.index, wrapped.index + 1)
            if basename(prog) is None and not prog.known:
                plan.warn(f"the command {prog.display} is not known{why(prog)}", prog.span,
                          code="unknown-command")
        return
    module, start = found
    plan.launcher = module.NAME
    module.parse(ctx, start)


"""A plain ``python`` run: one process.

``python x.py`` runs a script, ``python -m pkg`` a module, ``python -c CODE`` code
(entry kind "cli", target ``-c``, entry_args the code and what follows). The
interpreter's own flags (``-u -O -B -X opt -W arg``) are skipped. Modules that are
launchers (``torch.distributed.run``, ``deepspeed.launcher.runner``, verl's
trainers...) belong to their own modules, which come first in MODULES.
"""

from __future__ import annotations

from collections.abc import Sequence

from rankdebug import launcher_table
from rankdebug.command.launchers.base import Context
from rankdebug.command.launchers.common import (
    is_python,
    parse_python,
    set_entry,
    single_process,
    warn_unknown_program,
)
from rankdebug.command.launchers.ray import VERL_PREFIX
from rankdebug.command.words import Word
from rankdebug.launcher_table import LAUNCHER_MODULES

NAME = launcher_table.BY_NAME["python"].name


def matches(argv: Sequence[Word]) -> int | None:
    if not argv or not is_python(argv[0]):
        return None
    call = parse_python(argv, 1)
    module = call.module
    if module is not None and (module in LAUNCHER_MODULES or module.startswith(VERL_PREFIX)):
        return None
    return 1


def parse(ctx: Context, start: int) -> None:
    plan = ctx.plan
    single_process(plan)
    call = parse_python(plan.argv, start)
    if call.kind is None or call.target is None:
        return
    set_entry(plan, call.kind, call.target, call.index, call.args_from)
    if call.kind == "script":
        warn_unknown_program(plan, "script", call.target)

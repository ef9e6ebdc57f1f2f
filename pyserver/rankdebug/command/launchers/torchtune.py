"""torchtune's ``tune run`` (also ``python -m torchtune._cli.tune run``).

torchtune/_cli/run.py: ``tune run [TORCHRUN-OPTIONS] <recipe> --config <config>
[RECIPE-OPTIONS]``. Its parser is torchrun's (``get_args_parser()``, the training script
renamed ``recipe``). With any word before the recipe (a torchrun option) it calls
torchrun's ``run()`` in its own process, which starts the ranks; otherwise it runs the
recipe in its own process (``runpy``), one rank with no rank variable. The recipe is a
built-in name (``full_finetune_distributed``, entry kind "cli": nothing to look up here)
or the user's file (a script); ``--config`` is required.
Other subcommands (``tune download``, ``tune ls``, ``tune cp``) launch nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from rankdebug import launcher_table
from rankdebug.command.launchers import torchrun
from rankdebug.command.launchers.base import Context
from rankdebug.command.launchers.common import (
    program_or_module,
    set_entry,
    single_process,
    warn_unknown_program,
)
from rankdebug.command.options import Spec, parse_options
from rankdebug.command.plan import Entry, EntryKind
from rankdebug.command.words import Word

ROW = launcher_table.BY_NAME["tune"]
NAME = ROW.name
SPEC = Spec("tune run", torchrun.OPTIONS, abbrev=True, argparse=True)


def matches(argv: Sequence[Word]) -> int | None:
    start = program_or_module(argv, ROW)
    if start is None or start >= len(argv) or argv[start].value != "run":
        return None
    return start + 1


def parse(ctx: Context, start: int) -> None:
    plan = ctx.plan
    argv = plan.argv
    at = parse_options(plan, argv, start, SPEC, quiet=True).end  # parse_torch records them
    if at >= len(argv):
        plan.warn("tune run is given no recipe to run", argv[-1].span, code="missing-entry")
        return
    if not any(w.value == "--config" or (w.value or "").startswith("--config=")
               for w in argv[at + 1:]) and all(w.known for w in argv[at + 1:]):
        plan.warn("tune run needs --config CONFIG after the recipe", argv[at].span,
                  code="missing-config", severity="error")
    if at > start:
        # A torchrun option: torchrun's numbers, and its entry (the recipe) of our kind.
        torchrun.parse_torch(ctx, start, SPEC)
        plan.entry = Entry(_kind(argv[at]), argv[at])
        return
    single_process(plan)
    plan.in_launcher = True
    set_entry(plan, _kind(argv[at]), argv[at], at, at + 1)
    warn_unknown_program(plan, "recipe", argv[at])


def _kind(recipe: Word) -> EntryKind:
    """A file of the user's (``my_recipe.py``, ``recipes/x.py``): a script, looked up
    here; else the name of one of torchtune's recipes, in torchtune's package."""
    text = recipe.value or ""
    return "script" if text.endswith(".py") or "/" in text else "cli"

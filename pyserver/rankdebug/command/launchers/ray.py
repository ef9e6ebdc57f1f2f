"""Ray jobs: verl trainers and ``ray job submit``.

``python3 -m verl.trainer.main_ppo key=value ...`` (any ``verl.trainer.*`` module)
is a Ray driver: it starts trainer.nnodes × trainer.n_gpus_per_node workers across
the Ray cluster. Hydra overrides may be written ``key=v``, ``+key=v`` or
``++key=v``; trainer.nnodes defaults to 1 as in verl's config, and
trainer.n_gpus_per_node, when not on the command line, comes from the config file,
which is not read here.

``ray job submit [options] -- COMMAND`` submits COMMAND as the job's entrypoint.
"""

from __future__ import annotations

from collections.abc import Sequence

from rankdebug import launcher_table
from rankdebug.command.launchers.base import Context
from rankdebug.command.launchers.common import (
    basename,
    is_python,
    parse_python,
    product,
    read_int,
    set_entry,
)
from rankdebug.command.launchers.wrappers import program_entry, unwrap
from rankdebug.command.options import Opt, Spec, flag, parse_options, value
from rankdebug.command.plan import OptionUse
from rankdebug.command.words import Span, Word

ROW = launcher_table.BY_NAME["ray"]
NAME = ROW.name
# `python -m verl.trainer.main_ppo ...` and the other verl trainers.
VERL_PREFIX = "verl.trainer."

# `ray job submit` (ray/dashboard/modules/job/cli.py).
_SUBMIT_VALUES = (
    "address", "job-id", "submission-id", "runtime-env", "runtime-env-json", "working-dir",
    "metadata-json", "entrypoint-num-cpus", "entrypoint-num-gpus", "entrypoint-memory",
    "entrypoint-resources", "entrypoint-label-selector", "headers", "log-style", "log-color",
)  # fmt: skip
SUBMIT_OPTIONS: tuple[Opt, ...] = (
    *(value(name.replace("-", "_"), "--" + name) for name in _SUBMIT_VALUES),
    flag("no_wait", "--no-wait"),
    flag("verify", "--verify"),
    flag("verbose", "-v", "--verbose"),
)
SUBMIT_SPEC = Spec("ray job submit", SUBMIT_OPTIONS, complete=False)


def _verl_start(argv: Sequence[Word]) -> int | None:
    if not argv or not is_python(argv[0]):
        return None
    call = parse_python(argv, 1)
    module = call.module
    if module is not None and module.startswith(VERL_PREFIX):
        return call.args_from
    return None


def matches(argv: Sequence[Word]) -> int | None:
    if not argv:
        return None
    found = _verl_start(argv)
    if found is not None:
        return found
    if (
        len(argv) > 2
        and basename(argv[0]) in ROW.programs
        and argv[1].value == "job"
        and argv[2].value == "submit"
    ):
        return 3
    return None


def parse(ctx: Context, start: int) -> None:
    plan = ctx.plan
    argv = plan.argv
    submit = start >= 3 and argv[start - 1].value == "submit"
    if submit and basename(argv[start - 3]) in ROW.programs:
        _submit(ctx, start)
        return
    _verl(ctx, start)


def _submit(ctx: Context, start: int) -> None:
    plan = ctx.plan
    argv = plan.argv
    parsed = parse_options(plan, argv, start, SUBMIT_SPEC)
    at, _env = unwrap(argv, parsed.end)
    verl = _verl_start(argv[at:])
    if verl is not None:
        _verl(ctx, at + verl)
        return
    program_entry(ctx, parsed.end)
    plan.warn("the job's entrypoint starts its own Ray workers; how many is not known here",
              argv[start - 1].span)


def _verl(ctx: Context, start: int) -> None:
    plan = ctx.plan
    argv = plan.argv
    # The module word is just before `start` (python ... -m MODULE ARGS).
    module_index = start - 1
    target = argv[module_index]
    if target.known_prefix.startswith("-m"):
        target = target.suffix_after(2)
    set_entry(plan, "module", target, module_index, start)
    found: dict[str, tuple[Word, str, Span]] = {}
    for w in argv[start:]:
        text = w.known_prefix
        key, eq, _ = text.partition("=")
        if not eq:
            continue
        bare = key.lstrip("+")
        if bare in ("trainer.nnodes", "trainer.n_gpus_per_node"):
            val = w.suffix_after(len(key) + 1)
            found[bare] = (val, key, w.span)
            plan.options.append(OptionUse(bare, key, val, w.span))
    here = argv[module_index].span
    nnodes_entry = found.get("trainer.nnodes")
    gpus_entry = found.get("trainer.n_gpus_per_node")
    plan.nnodes = read_int(plan, nnodes_entry[0], nnodes_entry[1]) if nnodes_entry else 1
    if gpus_entry is not None:
        plan.nproc_per_node = read_int(plan, gpus_entry[0], gpus_entry[1])
    else:
        plan.warn("trainer.n_gpus_per_node is not on the command line; it comes from the "
                  "config file, which is not read here", here)
    plan.world_size = product(plan.nnodes, plan.nproc_per_node
                              if isinstance(plan.nproc_per_node, int) else None)
    if plan.nnodes == 1:
        plan.node_rank = 0

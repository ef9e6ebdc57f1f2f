"""``llamafactory-cli`` (also ``lmf``, ``python -m llamafactory.cli``).

llamafactory/launcher.py (0.9.5): ``train`` re-launches itself under torchrun when
FORCE_TORCHRUN (or USE_MCA) is truthy ("1", "true", "y"), or when more than one
device is visible and neither USE_RAY nor USE_KT is set. torchrun then gets NNODES
(default 1), NODE_RANK (0), NPROC_PER_NODE (the device count), MASTER_ADDR and
MASTER_PORT from the environment; RDZV_ID with MIN_NNODES/MAX_NNODES makes the job
elastic. Otherwise, and for every other command, it is one process.

The entry is the CLI itself (kind "cli"); entry_args are its arguments
(``train x.yaml ...``).
"""

from __future__ import annotations

from collections.abc import Sequence

from rankdebug import launcher_table
from rankdebug.command.launchers.base import Context
from rankdebug.command.launchers.common import (
    device_count,
    env_flag,
    is_python,
    not_known,
    program_or_module,
    read_int,
    set_entry,
    single_process,
    why,
)
from rankdebug.command.plan import LaunchPlan
from rankdebug.command.words import Span, Word

ROW = launcher_table.BY_NAME["llamafactory-cli"]
NAME = ROW.name
ENV_VARS = (
    "FORCE_TORCHRUN",
    "USE_MCA",
    "USE_RAY",
    "USE_KT",
    "USE_V1",
    "NNODES",
    "NODE_RANK",
    "NPROC_PER_NODE",
    "MASTER_ADDR",
    "MASTER_PORT",
    "RDZV_ID",
    "MIN_NNODES",
    "MAX_NNODES",
    "CUDA_VISIBLE_DEVICES",
    "ASCEND_RT_VISIBLE_DEVICES",
)
_DIST_COMMANDS_V1 = ("train", "sft", "dpo", "rm")


def matches(argv: Sequence[Word]) -> int | None:
    return program_or_module(argv, ROW)


def parse(ctx: Context, start: int) -> None:
    plan = ctx.plan
    argv = plan.argv
    here = argv[start - 1].span
    module_form = is_python(argv[0]) if argv else False
    set_entry(plan, "module" if module_form else "cli", argv[start - 1], start - 1, start)
    _not_exported(ctx, here)

    if start >= len(argv):
        single_process(plan)
        return
    command = argv[start]
    dist_commands = _DIST_COMMANDS_V1 if env_flag(ctx, "USE_V1") else ("train",)
    if command.value is None:
        plan.warn(f"the llamafactory-cli command {command.display} is not known{why(command)}",
                  command.span)
        return
    if command.value not in dist_commands:
        single_process(plan)
        return
    distributed, devices = _distributed(ctx, here)
    if distributed is None:
        plan.warn("it is not known whether llamafactory-cli train runs one process or "
                  "launches torchrun", here)
    elif not distributed and env_flag(ctx, "USE_RAY"):
        plan.warn("with USE_RAY, LLaMA-Factory starts Ray workers as its YAML's "
                  "ray_num_workers says, which is not read here", here)
    elif not distributed:
        single_process(plan)
    else:
        _torchrun(ctx, devices, here)


def _distributed(ctx: Context, here: Span) -> tuple[bool | None, int | None]:
    """Whether ``train`` re-launches itself under torchrun (None: not known), and the
    device count when it was needed to decide."""
    force = env_flag(ctx, "FORCE_TORCHRUN")
    mca = env_flag(ctx, "USE_MCA")
    ray = env_flag(ctx, "USE_RAY")
    kt = env_flag(ctx, "USE_KT")
    for name, flag_value in (("FORCE_TORCHRUN", force), ("USE_MCA", mca), ("USE_RAY", ray),
                             ("USE_KT", kt)):
        if flag_value is None:
            not_known(ctx.plan, name, ctx.env[name])
    forced = True if force or mca else None if force is None or mca is None else False
    if forced:
        return True, None
    devices: int | None = None
    auto: bool | None
    if ray or kt:
        auto = False
    elif ray is None or kt is None:
        auto = None
    else:
        devices = device_count(ctx, "whether llamafactory-cli train starts torchrun", here)
        auto = None if devices is None else devices > 1
    if auto:
        return True, devices
    if forced is None or auto is None:
        return None, devices
    return False, devices


def _torchrun(ctx: Context, devices: int | None, here: Span) -> None:
    """The numbers torchrun gets from the environment (``NNODES``, ``NPROC_PER_NODE``...)."""
    plan = ctx.plan
    plan.nnodes = _env_int(ctx, "NNODES", 1)
    plan.node_rank = _env_int(ctx, "NODE_RANK", 0)
    if "NPROC_PER_NODE" in ctx.env:
        plan.nproc_per_node = _env_int(ctx, "NPROC_PER_NODE", None)
    else:
        if devices is None:
            devices = device_count(ctx, "NPROC_PER_NODE's default (the device count)", here)
        plan.nproc_per_node = devices
    if "RDZV_ID" in ctx.env and "MIN_NNODES" in ctx.env and "MAX_NNODES" in ctx.env:
        _elastic(ctx, here)
    if plan.nnodes is not None and isinstance(plan.nproc_per_node, int):
        plan.world_size = plan.nnodes * plan.nproc_per_node
    plan.master_addr = ctx.env.get("MASTER_ADDR")
    plan.master_port = ctx.env.get("MASTER_PORT")


def _elastic(ctx: Context, here: Span) -> None:
    """RDZV_ID with MIN_NNODES and MAX_NNODES: an elastic job unless they are equal."""
    plan = ctx.plan
    low = _env_int(ctx, "MIN_NNODES", None)
    high = _env_int(ctx, "MAX_NNODES", None)
    if low is not None and high is not None and low != high:
        plan.nnodes = None
        plan.nnodes_range = (low, high)
        plan.warn(f"MIN_NNODES={low} and MAX_NNODES={high} make the job elastic, so the "
                  "world size is decided at run time", here)
    else:
        plan.nnodes = low if low is not None and low == high else None


def _env_int(ctx: Context, name: str, default: int | None) -> int | None:
    word = ctx.env.get(name)
    if word is None:
        return default
    return read_int(ctx.plan, word, name)


def _not_exported(ctx: Context, span: Span) -> None:
    """Warn about variables llamafactory-cli reads that are set but not exported."""
    plan: LaunchPlan = ctx.plan
    for name in ENV_VARS:
        word = ctx.shell_vars.get(name)
        if word is not None and name not in ctx.env:
            plan.warn(f"{name} is set but not exported, so llamafactory-cli does not see it; "
                      f"use `export {name}`", span, code="not-exported")

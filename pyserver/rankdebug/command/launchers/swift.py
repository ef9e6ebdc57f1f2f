"""ms-swift's ``swift METHOD ARGS`` and ``megatron METHOD ARGS`` (also ``python -m
swift.cli.main`` / ``swift.cli._megatron.main``).

swift/cli/main.py (modelscope/ms-swift, ``cli_main``): METHOD, ``_`` read as ``-``, must be a
key of ``ROUTE_MAPPING`` (megatron: swift/cli/_megatron/main.py's); each is a script of
swift/cli. A first argument ending in ``.yaml``/``.yml``/``.json`` is a config file whose
``ENV`` mapping sets variables not already set (``parse_yaml_args``). When NPROC_PER_NODE
or NNODES is set (to anything), ``pt``, ``sft``, ``rlhf``, ``infer`` and every megatron
method run ``python -m torch.distributed.run`` with ``--nproc_per_node``, ``--master_port``,
``--nnodes``, ``--node_rank`` and ``--master_addr`` from the variables that are set, so
torchrun reads them (its own defaults, and ``PET_*``, for the rest); otherwise, and for
every other method, ``python SCRIPT ARGS`` as a child process.

The entry is the method word, kind "cli" (the script is ms-swift's); its arguments follow.
The single-process child has no rank variable, which the bootstrap cannot tell from swift
itself (said at plan time).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from rankdebug import launcher_table
from rankdebug.command.launchers import torchrun
from rankdebug.command.launchers.base import Context
from rankdebug.command.launchers.common import (
    Setting,
    basename,
    is_python,
    load_yaml_mapping,
    not_exported,
    program_or_module,
    set_entry,
    single_process,
    unknown_subcommand,
    visible_devices,
)
from rankdebug.command.launchers.common import parse_python as _parse_python
from rankdebug.command.words import Span, Word

ROW = launcher_table.BY_NAME["swift"]
NAME = ROW.name
_SWIFT_MODULE, _MEGATRON_MODULE = ROW.modules

ROUTES = ("pt", "sft", "infer", "merge-lora", "web-ui", "deploy", "rollout", "rlhf", "sample",
          "export", "eval", "app")
MEGATRON_ROUTES = ("pt", "sft", "rlhf", "export")
# The methods ms-swift runs under torchrun (megatron: all of them).
_DISTRIBUTED = ("pt", "sft", "rlhf", "infer")
_TORCHRUN_VARS = ("NPROC_PER_NODE", "MASTER_PORT", "NNODES", "NODE_RANK", "MASTER_ADDR")
_CONFIG_SUFFIXES = (".json", ".yaml", ".yml")


def matches(argv: Sequence[Word]) -> int | None:
    start = program_or_module(argv, ROW)
    return start if start is not None and start < len(argv) else None


def _is_megatron(argv: Sequence[Word]) -> bool:
    if argv and is_python(argv[0]):
        return _parse_python(argv, 1).module == _MEGATRON_MODULE
    return bool(argv) and basename(argv[0]) == "megatron"


def parse(ctx: Context, start: int) -> None:
    plan = ctx.plan
    argv = plan.argv
    here = argv[start - 1].span
    megatron = _is_megatron(argv)
    tool = "megatron" if megatron else "swift"
    routes = MEGATRON_ROUTES if megatron else ROUTES
    not_exported(ctx, _TORCHRUN_VARS, tool, here)
    word = argv[start]
    method = (word.value or "").replace("_", "-")
    if word.value is None or method not in routes:
        unknown_subcommand(plan, tool, word, routes)
        return
    set_entry(plan, "cli", word, start, start + 1)
    ctx = _with_config_env(ctx, argv[start + 1] if start + 1 < len(argv) else None)
    module = (f"swift.cli._megatron.{method}" if megatron
              else f"swift.cli.{method.replace('-', '_')}")
    if not megatron and method not in _DISTRIBUTED:
        why = f"{tool} {method} never runs under torchrun"
    elif not any(name in ctx.env for name in ("NPROC_PER_NODE", "NNODES")):
        why = "NPROC_PER_NODE and NNODES are not set"
    else:
        why = ""
    if why:
        single_process(plan)
        plan.warn(f"{tool} {method} runs `python -m {module}` in a child python with no rank "
                  f"variable ({why}): that child is rank 0", here, severity="info",
                  code="rank-in-child")
        return
    torchrun.numbers_from(ctx, _env(ctx, "NNODES"), _env(ctx, "NPROC_PER_NODE"),
                          _env(ctx, "NODE_RANK"))
    plan.master_addr = ctx.env.get("MASTER_ADDR")
    plan.master_port = ctx.env.get("MASTER_PORT")


def _env(ctx: Context, name: str) -> Setting | None:
    word = ctx.env.get(name)
    return None if word is None else Setting(word, name)


def _with_config_env(ctx: Context, first: Word | None) -> Context:
    """``ctx`` with the variables a config file's ``ENV`` sets (those not set already)."""
    if first is None or first.value is None or not first.value.endswith(_CONFIG_SUFFIXES):
        return ctx
    plan = ctx.plan
    text = ctx.read_text(first.value)
    if text is None:
        plan.warn(f"the config file {first.value} cannot be read here; its ENV may set "
                  "NPROC_PER_NODE or NNODES", first.span, code="unreadable-file")
        return ctx
    values = _config_values(text, first.value.endswith(".json"))
    env = values.get("ENV") if values is not None else None
    if not isinstance(env, Mapping) or not env:
        return ctx
    added = {str(k): _literal(v, first.span) for k, v in env.items() if str(k) not in ctx.env}
    if not added:
        return ctx
    plan.warn(f"{first.value} sets {', '.join(sorted(added))} in its ENV", first.span,
              severity="info", code="config-env")
    inner = dataclasses.replace(ctx, env={**added, **ctx.env})
    plan.visible_devices = visible_devices(inner)
    return inner


def _config_values(text: str, is_json: bool) -> dict[str, object] | None:
    if not is_json:
        return load_yaml_mapping(text)
    import json

    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _literal(value: object, span: Span) -> Word:
    # swift sets str(v); YAML's true is Python's True.
    return Word.literal(str(value), span)

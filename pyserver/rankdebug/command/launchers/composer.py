"""MosaicML Composer's launcher: ``composer -n N [--world_size W --node_rank R --master_addr A
--master_port P] SCRIPT ARGS`` (also ``python -m composer.cli`` / ``composer.cli.launcher``).

composer/cli/launcher.py (mosaicml/composer, ``_get_parser`` and ``_parse_args``; argparse,
abbreviations allowed): ``-n/--nproc`` processes on this node, else ``LOCAL_WORLD_SIZE``,
else ``torch.cuda.device_count()`` (0 counts as 1); ``--world_size``, else ``WORLD_SIZE``
when it differs from ``LOCAL_WORLD_SIZE``, else nproc. A world larger than nproc is a
multi-node job: ``--node_rank``/``NODE_RANK`` or ``--base_rank``/``BASE_RANK`` (one gives the
other, base = node × nproc) and ``--master_addr``/``MASTER_ADDR`` and
``--master_port``/``MASTER_PORT`` are then required; on one node a node rank or base rank
other than 0 is refused. Each rank is ``python SCRIPT ARGS`` (``-m``: a module, ``-c``: a
command), started with RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, NODE_RANK and
MASTER_ADDR/PORT set.
"""

from __future__ import annotations

from collections.abc import Sequence

from rankdebug import launcher_table
from rankdebug.command.launchers.base import Context
from rankdebug.command.launchers.common import (
    Setting,
    device_count,
    launcher_entry,
    program_or_module,
    read_int,
    setting,
)
from rankdebug.command.options import Opt, Parsed, Spec, flag, parse_options, value
from rankdebug.command.plan import EntryKind, LaunchPlan
from rankdebug.command.words import Span, Word

ROW = launcher_table.BY_NAME["composer"]
NAME = ROW.name

OPTIONS: tuple[Opt, ...] = (
    flag("help", "-h", "--help", help="Show help and exit."),
    flag("version", "--version", help="Show the version and exit."),
    value("nproc", "-n", "--nproc", help="Processes on this node (default LOCAL_WORLD_SIZE, "
          "else the GPU count, at least 1)."),
    value("stdout", "--stdout", help="File name format for other ranks' stdout."),
    value("stderr", "--stderr", help="File name format for other ranks' stderr."),
    flag("verbose", "-v", "--verbose", help="Verbose messages."),
    flag("module_mode", "-m", "--module_mode", help="Run the entry as a module, like python -m."),
    flag("command_mode", "-c", "--command_mode", help="Run the entry as a program, without "
         "python."),
    value("world_size", "--world_size", help="Processes on all nodes (default WORLD_SIZE, "
          "else nproc)."),
    value("base_rank", "--base_rank", help="Global rank of this node's first process."),
    value("node_rank", "--node_rank", help="Rank of this node."),
    value("master_addr", "--master_addr", help="Address of the node with the TCP store."),
    value("master_port", "--master_port", help="Port of the TCP store."),
)
SPEC = Spec("composer", OPTIONS, abbrev=True, argparse=True)


def matches(argv: Sequence[Word]) -> int | None:
    return program_or_module(argv, ROW)


def parse(ctx: Context, start: int) -> None:
    plan = ctx.plan
    parsed = parse_options(plan, plan.argv, start, SPEC)
    if parsed.has("help") or parsed.has("version"):
        return
    here = plan.argv[start - 1].span
    _numbers(ctx, parsed, here)
    kind: EntryKind = "script"
    if parsed.has("module_mode") and parsed.has("command_mode"):
        use = parsed.get("command_mode")
        plan.warn("composer takes -m (module) or -c (command), not both",
                  use.record.span if use else here, code="conflict", severity="error")
    elif parsed.has("module_mode"):
        kind = "module"
    elif parsed.has("command_mode"):
        kind = "cli"
    launcher_entry(plan, parsed, "composer", kind)


def _number(plan: LaunchPlan, found: Setting | None) -> int | None:
    if found is None or found.word is None:
        return None
    return read_int(plan, found.word, found.label)


def _numbers(ctx: Context, parsed: Parsed, here: Span) -> None:
    plan = ctx.plan
    nproc = _nproc(ctx, parsed, here)
    world_set = setting(ctx, parsed, "world_size")
    if world_set is None and "WORLD_SIZE" in ctx.env and (
        ctx.env_value("LOCAL_WORLD_SIZE") != ctx.env_value("WORLD_SIZE")
        or ctx.env["WORLD_SIZE"].value is None
    ):
        world_set = Setting(ctx.env["WORLD_SIZE"], "WORLD_SIZE")
    world = _number(plan, world_set) if world_set is not None else nproc
    plan.nproc_per_node = nproc
    if nproc is None or world is None:
        return
    if world < nproc:
        plan.warn(f"composer refuses a world size ({world}) smaller than nproc ({nproc})",
                  world_set.word.span if world_set and world_set.word else here,
                  code="bad-value", severity="error")
        return
    plan.world_size = world
    plan.nnodes = world // nproc if world % nproc == 0 else None
    base = _number(plan, setting(ctx, parsed, "base_rank", "BASE_RANK"))
    node = _number(plan, setting(ctx, parsed, "node_rank", "NODE_RANK"))
    addr = setting(ctx, parsed, "master_addr", "MASTER_ADDR")
    port = setting(ctx, parsed, "master_port", "MASTER_PORT")
    plan.master_addr = addr.word if addr else None
    plan.master_port = port.word if port else None
    if world == nproc:
        for name, number in (("node_rank", node), ("base_rank", base)):
            if number not in (None, 0):
                plan.warn(f"composer refuses {name} {number} on a single node (the world size "
                          "equals nproc)", here, code="bad-value", severity="error")
        plan.node_rank = 0
        return
    _multinode(plan, (nproc, world), base, node, here)
    for what, found in (("master_addr", addr), ("master_port", port)):
        if found is None:
            plan.warn(f"a multi-node composer job needs --{what} (or {what.upper()})", here,
                      code="missing-value", severity="error")


def _nproc(ctx: Context, parsed: Parsed, here: Span) -> int | None:
    plan = ctx.plan
    found = setting(ctx, parsed, "nproc", "LOCAL_WORLD_SIZE")
    if found is not None:
        n = _number(plan, found)
        if n is not None and n < 1:
            plan.warn(f"composer refuses {found.label} {n}: nproc must be 1 or more",
                      found.word.span if found.word else here, code="bad-value",
                      severity="error")
            return None
        return n
    count = device_count(ctx, "composer's process count (-n not given: one per GPU)", here)
    return None if count is None else max(1, count)


def _multinode(plan: LaunchPlan, sizes: tuple[int, int], base: int | None, node: int | None,
               here: Span) -> None:
    """A node's rank from ``--node_rank`` or ``--base_rank``, as composer derives one from
    the other; ``sizes``: this node's processes and the world's."""
    nproc, world = sizes
    if base is None and node is None:
        plan.warn("a multi-node composer job needs --node_rank or --base_rank (or NODE_RANK, "
                  "BASE_RANK)", here, code="missing-value", severity="error")
        return
    if node is None and base is not None:
        if world % nproc or base % nproc:
            plan.warn("composer cannot tell the node rank from --base_rank when nodes run "
                      "different numbers of processes; give --node_rank", here,
                      code="uneven", severity="error")
            return
        node = base // nproc
    if base is None and node is not None:
        base = node * nproc
    if base is not None and base + nproc > world:
        plan.warn(f"composer refuses base rank {base} with {nproc} processes in a world of "
                  f"{world}", here, code="bad-value", severity="error")
        return
    plan.node_rank = node

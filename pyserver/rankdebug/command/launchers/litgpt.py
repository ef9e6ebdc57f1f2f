"""The litgpt CLI: ``litgpt pretrain|finetune|finetune_lora|... [MODEL] --devices N
--num_nodes M`` (and ``python -m litgpt``).

litgpt/__main__.py maps subcommands to functions that jsonargparse calls: ``--key value``,
``--key=value``, and ``--config FILE`` (YAML, its top-level keys), read in order, later
ones winning. The training subcommands build a Lightning Fabric from ``devices`` (pretrain:
"auto", every GPU; the finetunes: 1) and ``num_nodes`` (1); Fabric starts this node's other
processes itself (the same command, LOCAL_RANK set) and, with several nodes, the command
runs on each (NODE_RANK from the environment, or under srun, Slurm's tasks).
``generate_tp`` uses every GPU; the other subcommands run one process. The entry is the
CLI itself: each process runs the same command.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rankdebug import launcher_table
from rankdebug.command.launchers.base import Context
from rankdebug.command.launchers.common import (
    device_count,
    load_yaml_mapping,
    product,
    program_or_module,
    read_int,
    set_entry,
    single_process,
    why,
)
from rankdebug.command.options import fully_unknown, join_spans
from rankdebug.command.plan import OptionUse
from rankdebug.command.words import Span, Word

ROW = launcher_table.BY_NAME["litgpt"]
NAME = ROW.name

# Default devices of the subcommands that train ("auto": every GPU).
TRAINING: dict[str, str] = {
    "pretrain": "auto", "finetune": "1", "finetune_lora": "1", "finetune_full": "1",
    "finetune_adapter": "1", "finetune_adapter_v2": "1",
}
_READ = ("devices", "num_nodes")


def matches(argv: Sequence[Word]) -> int | None:
    return program_or_module(argv, ROW)


@dataclass
class _Value:
    """Where a setting came from: a flag as written, or the config file."""

    word: Word
    label: str


def parse(ctx: Context, start: int) -> None:
    plan = ctx.plan
    argv = plan.argv
    # Each process runs the CLI again: the entry is the CLI (`python -m litgpt`: its module).
    set_entry(plan, "module" if start > 1 else "cli", argv[start - 1], start - 1, start)
    sub = argv[start].value if start < len(argv) else None
    here = argv[start - 1].span
    if sub == "generate_tp":
        plan.nnodes, plan.node_rank = 1, 0
        n = device_count(ctx, "the number of processes (every GPU)", here)
        plan.nproc_per_node = plan.world_size = n
        return
    if sub not in TRAINING:
        single_process(plan)
        return
    found, opaque = _settings(ctx, start + 1)
    if found is None:
        return
    for key in _READ:
        if key not in found and opaque:
            plan.warn(f"--{key} is not given, and {opaque[0].display} may set it{why(opaque[0])}",
                      opaque[0].span)
    devices = _devices(ctx, found.get("devices"), TRAINING[sub], here) if (
        "devices" in found or not opaque) else None
    nodes_value = found.get("num_nodes")
    nodes = read_int(plan, nodes_value.word, nodes_value.label) if nodes_value else (
        None if opaque else 1)
    plan.nproc_per_node, plan.nnodes = devices, nodes
    plan.world_size = product(devices, nodes)
    _node_rank(ctx, here)


def _settings(ctx: Context, start: int) -> tuple[dict[str, _Value] | None, list[Word]]:
    """devices and num_nodes as the command line and its config files give them (None
    when a config cannot be read), and the words not known here that may give them."""
    plan = ctx.plan
    argv = plan.argv
    found: dict[str, _Value] = {}
    opaque: list[Word] = []
    model_seen = False
    i = start
    while i < len(argv):
        word = argv[i]
        text = word.known_prefix
        if not text.startswith("--"):
            # The first positional is the model; an unknown word after it may be options.
            if fully_unknown(word) and model_seen:
                opaque.append(word)
            model_seen = True
            i += 1
            continue
        key, eq, _ = text[2:].partition("=")
        val = word.suffix_after(3 + len(key)) if eq else (argv[i + 1] if i + 1 < len(argv)
                                                           else None)
        end = word.span if eq or val is None else val.span
        i += 1 if eq else 2
        if val is None:
            continue
        if key in _READ:
            found[key] = _Value(val, "--" + key)
            plan.options.append(OptionUse(key, "--" + key, val, join_spans(word.span, end)))
        elif key == "config" and not _config(ctx, val, found):
            return None, opaque
    return found, opaque


def _config(ctx: Context, word: Word, found: dict[str, _Value]) -> bool:
    """Values of a YAML config file; False when it cannot be read here."""
    plan = ctx.plan
    text = ctx.read_text(word.value) if word.value is not None else None
    data = load_yaml_mapping(text) if text is not None else None
    if data is None:
        plan.warn(f"the config {word.display} cannot be read here, and it may set devices "
                  "or num_nodes", word.span, code="unreadable-file")
        return False
    for key in _READ:
        if key in data and data[key] is not None:
            found[key] = _Value(Word.literal(str(data[key]), word.span),
                                f"{key} in {word.display}")
    return True


def _devices(ctx: Context, given: _Value | None, default: str, here: Span) -> int | None:
    """--devices: a count, or "auto"/-1 for every GPU (litgpt.utils.parse_devices)."""
    plan = ctx.plan
    word = given.word if given else Word.literal(default, here)
    text = word.value
    if text is not None and text.strip() in ("auto", "-1"):
        return device_count(ctx, "--devices auto (every GPU)", word.span)
    return read_int(plan, word, given.label if given else "--devices")


def _node_rank(ctx: Context, here: Span) -> None:
    plan = ctx.plan
    if plan.nnodes == 1:
        plan.node_rank = 0
        return
    rank = ctx.env.get("NODE_RANK") or ctx.env.get("GROUP_RANK")
    if rank is not None and rank.value is not None:
        plan.node_rank = read_int(plan, rank, "NODE_RANK")
    elif plan.nnodes is not None:
        plan.warn(f"with {plan.nnodes} nodes the command runs on each, and NODE_RANK (or "
                  "srun) says which node it is", here, severity="info", code="multi-node")

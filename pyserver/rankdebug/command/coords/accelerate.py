"""accelerate's one data-parallel dimension: ``fsdp`` when it shards (``--use_fsdp`` or a
config whose ``distributed_type`` is FSDP), ``dp`` when it replicates (DDP, DeepSpeed).

accelerate's FSDP and DDP put every process on one data-parallel group (huggingface/
accelerate, src/accelerate/accelerator.py), so the coordinate is the rank itself; the plan
says so, and where it read it."""

from __future__ import annotations

from collections.abc import Mapping

from rankdebug.command.coords.files import line_of, read_text
from rankdebug.command.coords.layout import Layout, Read
from rankdebug.command.words import Word

SHARDED = {"FSDP"}
REPLICATED = {"MULTI_GPU", "MULTI_CPU", "MULTI_NPU", "MULTI_XPU", "MULTI_MLU", "MULTI_MUSA",
              "MULTI_HPU", "MULTI_SDAA", "DEEPSPEED"}
SWITCHES = {"use_fsdp": "fsdp", "multi_gpu": "dp", "use_deepspeed": "dp"}


def read(options: Mapping[str, Word | None], world: int | None, file: str | None,
         cwd: str | None) -> Layout | None:
    """``options``: accelerate launch's options by name (value word, None for a switch)."""
    if world is None:
        return None
    for name, dim in SWITCHES.items():
        if name in options:
            return Layout.grid([(dim, world)], world, "accelerate",
                               [Read("--" + name, "true", file)])
    config = options.get("config_file")
    path = config.value if config is not None else None
    loaded = read_text(path, cwd) if path is not None else None
    kind = _distributed_type(loaded[1]) if loaded is not None else None
    if loaded is None or kind is None or kind.upper() not in SHARDED | REPLICATED:
        return None
    dim = "fsdp" if kind.upper() in SHARDED else "dp"
    return Layout.grid([(dim, world)], world, "accelerate",
                       [Read("distributed_type", kind, loaded[0],
                             line_of(loaded[1], "distributed_type"))])


def _distributed_type(text: str) -> str | None:
    import yaml  # only when a config is read: importing it costs ~70 ms

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    kind = data.get("distributed_type") if isinstance(data, dict) else None
    return kind if isinstance(kind, str) else None

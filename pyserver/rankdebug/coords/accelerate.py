"""accelerate's one data-parallel dimension: ``fsdp`` when it shards (``--use_fsdp`` or a
config whose ``distributed_type`` is FSDP), ``dp`` when it replicates (DDP, DeepSpeed).

accelerate's FSDP and DDP put every process on one data-parallel group (huggingface/
accelerate, src/accelerate/accelerator.py), so the coordinate is the rank itself; the plan
says so, and where it read it."""

from __future__ import annotations

from rankdebug.command.launchers.common import load_yaml_mapping
from rankdebug.command.plan import LaunchPlan
from rankdebug.coords.files import line_of, read_text
from rankdebug.coords.layout import Layout, Read

SHARDED = {"FSDP"}
REPLICATED = {"MULTI_GPU", "MULTI_CPU", "MULTI_NPU", "MULTI_XPU", "MULTI_MLU", "MULTI_MUSA",
              "MULTI_HPU", "MULTI_SDAA", "DEEPSPEED"}


def read(plan: LaunchPlan, file: str | None) -> Layout | None:
    world = plan.world_size
    if plan.launcher != "accelerate" or world is None:
        return None
    for use in plan.options:
        if use.name in ("use_fsdp", "multi_gpu", "use_deepspeed"):
            span = use.span
            dim = "fsdp" if use.name == "use_fsdp" else "dp"
            return Layout.grid([(dim, world)], world, "accelerate",
                               [Read(use.flag, "true", file, span.start_line + 1,
                                     span.start_col + 1)])
    config = plan.option("config_file")
    if config is None or config.value is None or config.value.value is None:
        return None
    loaded = read_text(config.value.value, plan.cwd)
    values = load_yaml_mapping(loaded[1]) if loaded is not None else None
    kind = values.get("distributed_type") if values is not None else None
    if loaded is None or not isinstance(kind, str) or kind.upper() not in SHARDED | REPLICATED:
        return None
    dim = "fsdp" if kind.upper() in SHARDED else "dp"
    return Layout.grid([(dim, world)], world, "accelerate",
                       [Read("distributed_type", kind, loaded[0],
                             line_of(loaded[1], "distributed_type"))])

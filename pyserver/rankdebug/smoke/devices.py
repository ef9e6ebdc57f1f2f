"""The ``devices`` stage: the GPUs the smoke run expects are visible. A command that names
no GPU runs its ranks on the CPU (gloo) and passes on a machine without one."""

from __future__ import annotations

import os

from rankdebug.command import LaunchPlan
from rankdebug.command.launchers.common import count_visible
from rankdebug.smoke.model import Smoke

_GPU_DIR = "/proc/driver/nvidia/gpus"
_VISIBLE = ("CUDA_VISIBLE_DEVICES", "ASCEND_RT_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES")


def machine_gpus() -> int:
    """NVIDIA GPUs the driver shows (no CUDA initialisation, no nvidia-smi)."""
    try:
        return len(os.listdir(_GPU_DIR))
    except OSError:
        return 0


def expects_gpus(plan: LaunchPlan, result: Smoke, source: str | None) -> str | None:
    """Why the command needs GPUs, or None when it may run on the CPU (DeepSpeed's
    ``--num_gpus`` counts CPU ranks on a machine without GPUs)."""
    for name in _VISIBLE:
        if name in result.env and count_visible(result.env[name]) != 0:  # None: all
            return f"{name}={result.env[name]}"
    if plan.nproc_per_node == "gpu":
        return "--nproc_per_node gpu"
    if "verl" in result.frameworks:
        return "verl places its workers on GPUs"
    if source and "nccl" in source and "gloo" not in source:
        return "the script uses the nccl backend and never gloo"
    return None


def check(plan: LaunchPlan, result: Smoke, source: str | None) -> tuple[str, bool, str]:
    shape = result.plan.get("to")
    per_node = shape.get("nproc_per_node") if isinstance(shape, dict) else None
    ranks = per_node if isinstance(per_node, int) else 1
    machine = machine_gpus()
    visible, named_by = machine, ""
    for name in _VISIBLE:
        value = result.env.get(name, os.environ.get(name))
        if value is not None:
            named = count_visible(value)  # None: all of them
            visible = machine if named is None else min(machine, named)
            named_by = f"{name}={value}"
            if name in result.env and named is not None and named < ranks:
                return "devices", False, (f"{ranks} processes per node, but {named_by} makes "
                                          f"{named} device(s) visible")
            break
    need = expects_gpus(plan, result, source)
    if machine == 0:
        if need:
            return "devices", False, f"the command expects GPUs ({need}), but this machine has none"
        return "devices", True, f"no GPU here: {ranks} rank(s) per node run on the CPU (gloo)"
    if ranks > visible:
        where = f" ({named_by})" if named_by else ""
        return "devices", False, (f"{ranks} processes per node, but {visible} GPU(s) are "
                                  f"visible{where}")
    return "devices", True, f"{ranks} rank(s) per node, {visible} GPU(s) visible"

"""The ``devices`` stage: the GPUs the smoke run expects are visible. A command that names
no GPU, and a script that asks for neither CUDA nor NCCL where it could not choose the CPU
(``gpu_use.py``), runs its ranks on the CPU (gloo) and passes on a machine without one; one
that does fails there, with the change that runs it on the CPU (``rankdebug smoke --cpu``)."""

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


def expects_gpus(plan: LaunchPlan, result: Smoke) -> str | None:
    """Why the command needs GPUs, or None when it may run on the CPU (DeepSpeed's
    ``--num_gpus`` counts CPU ranks on a machine without GPUs)."""
    for name in _VISIBLE:
        if name in result.env and count_visible(result.env[name]) != 0:  # None: all
            return f"{name}={result.env[name]}"
    if plan.nproc_per_node == "gpu":
        return "--nproc_per_node gpu"
    if "verl" in result.frameworks:
        return "verl places its workers on GPUs"
    return uses_text(result) if result.gpu_uses else None


def uses_text(result: Smoke) -> str:
    """``train.py: backend = 'nccl' (line 5), x.cuda() (line 40)``."""
    script = result.entry_name or "the script"
    listed = ", ".join(f"{u.what} (line {u.line})" for u in result.gpu_uses[:4])
    more = f" and {len(result.gpu_uses) - 4} more" if len(result.gpu_uses) > 4 else ""
    return f"{script}: {listed}{more}"


def cpu_offer(result: Smoke) -> str:
    """What would run the command on the CPU: ``--cpu``'s changes, and what no flag reaches."""
    fixed = [u for u in result.gpu_uses if u.knob is None]
    parts = []
    if result.cpu_change and not result.on_cpu:
        parts.append(f"`rankdebug smoke --cpu` sets {' '.join(result.cpu_change)}")
    if fixed:
        script = result.entry_name or "the script"
        where = ", ".join(f"{script}:{u.line} ({u.what})" for u in fixed[:3])
        parts.append(f"{'but ' if parts else ''}no flag reaches {where}: only an edit of the "
                     "script runs it on the CPU")
    return "; ".join(parts)


def check(plan: LaunchPlan, result: Smoke) -> tuple[str, bool, str]:
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
            if name in result.env and named is not None and 0 < named < ranks:
                return "devices", False, (f"{ranks} processes per node, but {named_by} makes "
                                          f"{named} device(s) visible")
            break
    need = expects_gpus(plan, result)
    if visible == 0:
        where = "this machine has none" if machine == 0 else f"{named_by} hides them"
        if need:
            offer = cpu_offer(result)
            return "devices", False, (f"the command expects GPUs ({need}), but {where}"
                                      + (f"; on the CPU: {offer}" if offer else ""))
        here = "here" if machine == 0 else f"visible ({named_by})"
        return "devices", True, f"no GPU {here}: {ranks} rank(s) per node run on the CPU (gloo)"
    if ranks > visible:
        where = f" ({named_by})" if named_by else ""
        return "devices", False, (f"{ranks} processes per node, but {visible} GPU(s) are "
                                  f"visible{where}")
    return "devices", True, f"{ranks} rank(s) per node, {visible} GPU(s) visible"

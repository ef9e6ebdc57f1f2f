"""Running the ranks on the CPU (``rankdebug smoke --cpu``): each CUDA/NCCL use of the script
that a command-line knob decides (``gpu_use.py``) gets ``cpu``/``gloo``, and no GPU is
visible to the ranks. Without ``--cpu`` the same changes are only listed (``cpu_change``), for
the devices check to offer; a use fixed in code is reported, never claimed."""

from __future__ import annotations

from rankdebug.smoke import gpu_use
from rankdebug.smoke.context import Rewrite

WHY = {"nccl": "on the CPU: gloo, as NCCL needs GPUs (--cpu)",
       "cuda": "on the CPU: no GPU is used (--cpu)"}
HIDE_WHY = "on the CPU: no GPU is visible to the ranks (--cpu)"


def uses(rw: Rewrite) -> list[gpu_use.Use]:
    given = {**rw.values, **gpu_use.given_values(rw.args.texts)}
    return gpu_use.scan(rw.source, given, configurator=rw.configurator)


def apply(rw: Rewrite) -> list[gpu_use.Use]:
    """Set (``--cpu``) or list the CPU change; returns the uses left."""
    found = uses(rw)
    knobs = {u.knob: u for u in found if u.knob is not None}
    for knob, use in knobs.items():
        value = gpu_use.CPU[use.kind]
        flag = f"--{knob}"
        form = f"{flag}={value}" if rw.configurator else f"{flag} {value}"
        if not rw.settings.cpu:
            rw.cpu_change.append(form)
            continue
        spellings = (flag, flag.replace("_", "-"))
        hit = rw.args.find(spellings)
        rw.args.set(spellings, value, joined=rw.configurator)
        if hit is not None:  # the command line set it
            rw.change(hit.flag, hit.value, value, WHY[use.kind], hit.flag)
        elif rw.configurator:  # a key of the script, as the other configurator knobs
            script = rw.plan.entry.target.display if rw.plan.entry else "the script"
            rw.change(knob, use.value, value, WHY[use.kind], f"{script}: {knob}")
        else:  # an option's default
            rw.change(flag, use.value, value, WHY[use.kind], flag)
        rw.cpu_change.append(form)
    if rw.settings.cpu:
        rw.change("CUDA_VISIBLE_DEVICES", rw.env.get("CUDA_VISIBLE_DEVICES"), "", HIDE_WHY,
                  "CUDA_VISIBLE_DEVICES (environment)")
        rw.env["CUDA_VISIBLE_DEVICES"] = ""
        return uses(rw)
    return found

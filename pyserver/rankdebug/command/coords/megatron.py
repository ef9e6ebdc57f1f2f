"""Megatron-LM's parallel sizes from its arguments (also MindSpeed and Megatron-DeepSpeed,
which take the same flags).

Read as Megatron-LM computes them (NVIDIA/Megatron-LM, megatron/core/parallel_state.py):
``initialize_model_parallel`` builds a dense ``RankGenerator(tp, ep=1, dp, pp, cp, order)``
with ``data_parallel_size = world_size // (tp * pp * cp)`` (RuntimeError when it does not
divide), and an expert generator ``RankGenerator(tp=etp, ep, dp=edp, pp, cp=1, order)`` with
``etp`` defaulting to tp. Both are row-major with the first name of ``order`` fastest;
megatron/training/initialize.py passes ``order='tp-cp-ep-dp-pp'``, or ``'tp-cp-ep-pp-dp'``
with ``--use-tp-pp-dp-mapping``. ep is therefore ``rank // etp % ep``.
Megatron's parser has ``allow_abbrev=False`` (megatron/training/arguments.py), so only the
full flags count.
"""

from __future__ import annotations

from collections.abc import Sequence

from rankdebug.command.coords.args import Found, flag, switch
from rankdebug.command.coords.layout import Axis, Layout, Mismatch, Read
from rankdebug.command.words import Word

TP = "--tensor-model-parallel-size"
PP = "--pipeline-model-parallel-size"
CP = "--context-parallel-size"
EP = "--expert-model-parallel-size"
ETP = "--expert-tensor-parallel-size"
TP_PP_DP = "--use-tp-pp-dp-mapping"
FLAGS = (TP, PP, CP, EP)


def read(args: Sequence[Word], world: int | None, file: str | None) -> Layout | Mismatch | None:
    """The layout when the command gives any of Megatron's parallel sizes, else None."""
    found = {name: flag(args, name, file) for name in (*FLAGS, ETP)}
    given = [f for f in found.values() if f is not None]
    if not any(found[name] for name in FLAGS) or world is None:
        return None
    sizes: dict[str, int] = {}
    for name, short in ((TP, "tp"), (PP, "pp"), (CP, "cp"), (EP, "ep"), (ETP, "etp")):
        one: Found | None = found[name]
        if one is None:
            continue
        value = one.number()
        if value is None or value < 1:
            return None  # not known here ($TP unset): no guess rather than a wrong one
        sizes[short] = value
    tp, pp, cp = sizes.get("tp", 1), sizes.get("pp", 1), sizes.get("cp", 1)
    ep, etp = sizes.get("ep", 1), sizes.get("etp", tp)
    model = tp * pp * cp
    if world % model:
        return Mismatch(f"Megatron needs the world size ({world}) divisible by tensor × "
                        f"pipeline × context parallel size ({model}); it stops with "
                        f"'world_size ({world}) is not divisible by {model}'",
                        _culprit(found, (TP, PP, CP)))
    if world % (etp * ep * pp):
        return Mismatch(f"Megatron needs the world size ({world}) divisible by expert tensor "
                        f"× expert × pipeline parallel size ({etp * ep * pp})",
                        _culprit(found, (EP, ETP, TP, PP)))
    dp = world // model
    order = ("tp", "cp", "pp", "dp") if switch(args, TP_PP_DP) else ("tp", "cp", "dp", "pp")
    sized = {"tp": tp, "cp": cp, "dp": dp, "pp": pp}
    views = (Axis("ep", ep, etp),) if ep > 1 else ()
    return Layout.grid([(n, sized[n]) for n in order], world, "megatron",
                       [f.read for f in given], views)


def _culprit(found: dict[str, Found | None], names: Sequence[str]) -> Read:
    return next(f.read for n in names if (f := found[n]) is not None)

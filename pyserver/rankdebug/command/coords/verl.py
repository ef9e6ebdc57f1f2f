"""verl's rollout mesh from its Hydra overrides.

Read as verl builds it (volcengine/verl, verl/workers/fsdp_workers.py, also
megatron_workers.py and engine_workers.py): ``infer_tp = rollout.tensor_model_parallel_size *
rollout.data_parallel_size``, ``infer_pp = rollout.pipeline_model_parallel_size``,
``dp = world_size // (infer_tp * infer_pp)`` and ``init_device_mesh(mesh_shape=(dp, infer_tp,
infer_pp), mesh_dim_names=["dp", "infer_tp", "infer_pp"])``: row-major, infer_pp fastest.
The dimensions keep verl's names.
"""

from __future__ import annotations

from collections.abc import Sequence

from rankdebug.command.coords.args import hydra
from rankdebug.command.coords.layout import Layout, Mismatch
from rankdebug.command.words import Word

ROLLOUT = "actor_rollout_ref.rollout."


def read(args: Sequence[Word], world: int | None, file: str | None) -> Layout | Mismatch | None:
    found = {k: hydra(args, ROLLOUT + k, file) for k in (
        "tensor_model_parallel_size", "data_parallel_size", "pipeline_model_parallel_size")}
    given = [f for f in found.values() if f is not None]
    if not given or world is None:
        return None
    sizes = {}
    for key, one in found.items():
        value = one.number() if one is not None else 1
        if value is None or value < 1:
            return None
        sizes[key] = value
    infer_tp = sizes["tensor_model_parallel_size"] * sizes["data_parallel_size"]
    infer_pp = sizes["pipeline_model_parallel_size"]
    if world % (infer_tp * infer_pp):
        return Mismatch(f"verl needs the world size ({world}) divisible by the rollout's "
                        f"tensor × data × pipeline parallel size ({infer_tp * infer_pp}); it "
                        "stops with 'rollout world_size ... is not divisible'", given[0].read)
    order = [("infer_pp", infer_pp), ("infer_tp", infer_tp), ("dp", world // (infer_tp * infer_pp))]
    return Layout.grid(order, world, "verl", [f.read for f in given])

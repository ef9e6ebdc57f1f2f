"""A stand-in for Megatron-LM's ``megatron.core.parallel_state`` (NVIDIA/Megatron-LM, the
functions of the same names): real gloo process groups in Megatron's rank order, tensor
parallel changing fastest, then context, data, pipeline. Only what a rank's coordinates are
read from (``rankdebug.runtime.coords``)."""

import torch.distributed as dist

_GROUPS = {}


def initialize_model_parallel(tensor_model_parallel_size=1, pipeline_model_parallel_size=1,
                              context_parallel_size=1, expert_model_parallel_size=1):
    world = dist.get_world_size()
    tp, pp, cp = tensor_model_parallel_size, pipeline_model_parallel_size, context_parallel_size
    dp = world // (tp * pp * cp)
    order = (("tp", tp), ("cp", cp), ("dp", dp), ("pp", pp))
    me = dist.get_rank()
    for i, (name, size) in enumerate(order):
        stride = 1
        for _, inner in order[:i]:
            stride *= inner
        # Every group of this dimension, made on every rank (new_group is collective).
        for start in range(world):
            if (start // stride) % size:
                continue
            members = [start + k * stride for k in range(size)]
            group = dist.new_group(members)
            if me in members:
                _GROUPS[name] = group
    _GROUPS["ep"] = _GROUPS["dp"] if expert_model_parallel_size > 1 else None


def model_parallel_is_initialized():
    return all(_GROUPS.get(name) is not None for name in ("tp", "pp", "dp"))


def _group(name):
    group = _GROUPS.get(name)
    assert group is not None, f"{name} group is not initialized"
    return group


def get_tensor_model_parallel_rank():
    return _group("tp").rank()


def get_tensor_model_parallel_world_size():
    return _group("tp").size()


def get_pipeline_model_parallel_rank():
    return dist.get_rank(group=_group("pp"))


def get_pipeline_model_parallel_world_size():
    return _group("pp").size()


def get_data_parallel_rank(with_context_parallel=False, partial_data_parallel=False):
    return _group("dp").rank()


def get_data_parallel_world_size(with_context_parallel=False, partial_data_parallel=False):
    return _group("dp").size()


def get_context_parallel_rank():
    return _group("cp").rank()


def get_context_parallel_world_size():
    return _group("cp").size()


def get_expert_model_parallel_rank():
    return _group("ep").rank()


def get_expert_model_parallel_world_size():
    return _group("ep").size()

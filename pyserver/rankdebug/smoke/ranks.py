"""The smoke run's shape: at most 2 ranks per node (or ``--nproc N``) on one node, unless
the code's model parallelism needs more ranks; written where the launcher reads it."""

from __future__ import annotations

from rankdebug.smoke.args import Arg
from rankdebug.smoke.context import Rewrite

DEFAULT_PER_NODE = 2
# Launchers that start one rank per GPU of the machine when the command does not say.
MACHINE_SIZED = ("torchrun", "torch.distributed.launch", "deepspeed")
NODES_WHY = "one node: the smoke run starts on this machine"


def per_node_why(rw: Rewrite) -> str:
    """Why the smoke run has ``rw.per_node`` ranks per node."""
    if rw.settings.nproc is not None:
        return f"{rw.settings.nproc} ranks per node, as asked (--nproc)"
    if rw.parallel > DEFAULT_PER_NODE and rw.per_node == rw.parallel:
        return (f"{rw.parallel} ranks per node: the model parallelism needs them (a group "
                "must be whole)")
    return "two ranks per node: every collective still crosses ranks, and the job starts fast"


def plan_shape(rw: Rewrite) -> None:
    """Set ``rw.per_node`` and ``rw.nodes`` from the plan, the parallelism and the user."""
    plan = rw.plan
    per_node: int | None = plan.nproc_per_node if isinstance(plan.nproc_per_node, int) else None
    if per_node is None and plan.nproc_per_node in ("gpu", "auto") and plan.visible_devices:
        per_node = plan.visible_devices
    nodes = plan.nnodes or 1
    if per_node is None and plan.world_size:
        per_node = max(1, plan.world_size // nodes)
    if per_node is None and plan.launcher in MACHINE_SIZED:
        # The full run takes every GPU of the machine it lands on; the smoke run pins a few.
        rw.per_node, rw.nodes = rw.settings.nproc or max(DEFAULT_PER_NODE, rw.parallel), 1
        if not (plan.option("nproc_per_node") or plan.option("num_gpus")):
            rw.note(f"{plan.launcher} would start one rank per GPU of the machine: the smoke "
                    f"run starts {rw.per_node}")
        return
    if per_node is None:
        rw.per_node, rw.nodes = None, 1
        if plan.launcher not in ("python", "other"):
            rw.note("the number of ranks is not known here: the launcher is left as written")
        return
    want = rw.settings.nproc or min(per_node, max(DEFAULT_PER_NODE, rw.parallel))
    if rw.settings.nproc is None and rw.parallel > want:
        # The model-parallel group does not fit on one node's ranks: keep the job's shape.
        rw.per_node, rw.nodes = per_node, nodes
        rw.note(f"the model parallelism needs {rw.parallel} ranks, more than one node has "
                f"({per_node}): the nodes and ranks are left as written")
        return
    rw.per_node, rw.nodes = want, 1
    if rw.parallel > 1 and rw.settings.nproc is None:
        rw.note(f"the model parallelism needs {rw.parallel} ranks: the smoke run keeps "
                f"{max(want, rw.parallel)} per node")


def rewrite(rw: Rewrite) -> None:
    """Write the shape chosen by :func:`plan_shape` into the launcher's options."""
    if rw.per_node is None:
        return
    launcher = rw.plan.launcher
    per_node, nodes = rw.per_node, rw.nodes
    if launcher in ("torchrun", "torch.distributed.launch"):
        _option(rw, "nproc_per_node", per_node, per_node_why(rw))
        _option(rw, "nnodes", nodes, NODES_WHY)
        if nodes == 1:
            _option(rw, "node_rank", 0, "the only node is node 0")
    elif launcher == "colossalai":
        _option(rw, "nproc_per_node", per_node, per_node_why(rw))
        _option(rw, "num_nodes", nodes, NODES_WHY)
    elif launcher == "deepspeed":
        _deepspeed(rw, per_node, nodes)
    elif launcher == "accelerate":
        _option(rw, "num_processes", per_node * nodes, per_node_why(rw),
                add=bool(rw.plan.world_size and rw.plan.world_size != per_node * nodes))
        _option(rw, "num_machines", nodes, NODES_WHY)
        if nodes == 1:
            _option(rw, "machine_rank", 0, "the only machine is machine 0")
    elif launcher == "msrun":
        _option(rw, "worker_num", per_node * nodes, per_node_why(rw), add=True)
        _option(rw, "local_worker_num", per_node, per_node_why(rw), add=True)
    elif launcher == "mpirun":
        _option(rw, "np", per_node * nodes, per_node_why(rw))
    elif launcher == "llamafactory-cli":
        _llamafactory(rw, per_node, nodes)
    elif launcher == "srun":
        rw.note("srun decides the ranks from its allocation: its options are left as written")


def _deepspeed(rw: Rewrite, per_node: int, nodes: int) -> None:
    if rw.plan.option("include") or rw.plan.option("exclude"):
        rw.note("deepspeed --include/--exclude pick the devices: left as written")
    else:
        _option(rw, "num_gpus", per_node, per_node_why(rw), add=True)
    _option(rw, "num_nodes", nodes, NODES_WHY)
    if rw.plan.option("hostfile") and nodes == 1:
        rw.note("deepspeed's hostfile still names the hosts: --num_nodes 1 uses the first")


def _llamafactory(rw: Rewrite, per_node: int, nodes: int) -> None:
    for name, value, why in (("NPROC_PER_NODE", per_node, per_node_why(rw)),
                             ("NNODES", nodes, NODES_WHY), ("NODE_RANK", 0, "the only node")):
        old = rw.env.get(name)
        if old is None and name != "NPROC_PER_NODE":
            continue
        if old != str(value):
            rw.env[name] = str(value)
            rw.change(name, old, value, why, "environment")


def _option(rw: Rewrite, name: str, value: int, why: str, *, add: bool = False) -> None:
    """Give the launcher option ``name`` (its canonical name in the plan) ``value`` where it
    is written; ``add``: write it before the entry when it is not."""
    use = rw.plan.option(name)
    flag = use.flag if use else None
    if flag and "=" in flag:
        flag = flag.partition("=")[0]
    hit = rw.head.find((flag,)) if flag is not None else None
    if flag is not None and hit is not None:
        old = hit.value
        if not rw.head.items[hit.value_index].known:
            rw.note(f"{flag} {old} is not known here: the smoke run sets {value}")
        if old != str(value):
            rw.head.set((flag,), str(value))
            rw.change(flag, old, value, why, f"{rw.plan.launcher} {flag}")
        return
    if not add:
        return
    flag = f"--{name}"
    at = len(rw.head.items) - 1  # before the entry
    if at >= 1 and rw.head.items[at - 1].text in ("-m", "--module"):
        at -= 1
    rw.head.items[at:at] = [Arg(flag), Arg(str(value))]
    rw.change(flag, None, value, why, f"{rw.plan.launcher} {flag}")

"""The launchers ``rankdebug`` knows, one row each: the name ``rankdebug plan`` reports, the
programs and ``python -m`` modules that start it, the words of its processes, and where its
ranks find their rank numbers.

Every layer that needs a launcher's name or one of these facts reads it here; the per-
launcher parsing lives in ``rankdebug.command.launchers`` (one module per launcher).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rankdebug.runtime import bootstrap

_TORCH, _MPI = bootstrap.TORCH_VARS, bootstrap.MPI_VARS
# The launcher of a command no launcher module knows (its program is the entry).
OTHER = "other"


@dataclass(frozen=True)
class Launcher:
    name: str
    # Program names that start it (first word of a command, or of a process).
    programs: tuple[str, ...] = ()
    # Modules that start it under `python -m`; the first is its `python -m` form.
    modules: tuple[str, ...] = ()
    # Words of its own helper processes (daemons, agents) seen in a job's process tree.
    helpers: tuple[str, ...] = ()
    # RANK/LOCAL/SIZE variable triples its ranks carry (``RANKDEBUG_RANKVARS``).
    rank_vars: str = f"{_TORCH},{_MPI}"
    # Whether it starts the ranks itself (under srun or mpirun, the plan is its own).
    starts_ranks: bool = True
    # Whether ``python -m modules[0]`` runs it with the same arguments (a whole-job
    # debugpy configuration can then start it).
    python_form: bool = False
    # The rendezvous port it uses when the command names none (None: none, or not fixed).
    default_master_port: int | None = None
    # Whether a rank that ends before its script finished is a failure the launcher acts on
    # (Ray's actors end when the driver shuts Ray down; the driver hears of one that dies).
    rank_end_fails: bool = True
    # Variables a debugged job gets unless the user set them: this launcher's own limits
    # that a rank waiting for its client would run into.
    debug_env: tuple[tuple[str, str], ...] = ()
    # Whether, run once, it starts the ranks of every node itself (over ssh or its daemons),
    # with this machine's environment; else it runs once per node (torchrun).
    spreads: bool = False


TABLE: tuple[Launcher, ...] = (
    Launcher("torchrun", ("torchrun",), ("torch.distributed.run",), rank_vars=_TORCH,
             python_form=True, default_master_port=29500),
    Launcher("torch.distributed.launch", (), ("torch.distributed.launch",), rank_vars=_TORCH,
             python_form=True, default_master_port=29500),
    Launcher("deepspeed", ("deepspeed",), ("deepspeed.launcher.runner",),
             ("deepspeed.launcher.launch",), rank_vars=_TORCH, python_form=True, spreads=True),
    Launcher("accelerate", ("accelerate", "accelerate-launch"),
             ("accelerate.commands.launch", "accelerate.commands.accelerate_cli"),
             rank_vars=_TORCH, python_form=True),
    Launcher("llamafactory-cli", ("llamafactory-cli", "lmf"), ("llamafactory.cli",),
             rank_vars=_TORCH),
    # torchtune's `tune run`: torchrun in its own process when given a torchrun option, else
    # the recipe in its own process (the plan says so: ``in_launcher``).
    Launcher("tune", ("tune",), ("torchtune._cli.tune",), rank_vars=_TORCH,
             default_master_port=29500),
    Launcher("msrun", ("msrun",), ("mindspore.parallel.cluster.run",),
             rank_vars=bootstrap.MINDSPORE_VARS),
    Launcher("mpirun", ("mpirun", "mpiexec", "orterun", "prterun", "mpiexec.hydra",
                        "mpirun.openmpi", "mpiexec.openmpi", "mpirun.mpich", "mpiexec.mpich"), (),
             ("orted", "prted", "hydra_pmi_proxy"), rank_vars=f"{_TORCH},{_MPI}",
             starts_ranks=False, spreads=True),
    Launcher("srun", ("srun",), (), ("slurmstepd",), rank_vars=f"{_TORCH},{bootstrap.SLURM_VARS}",
             starts_ranks=False, spreads=True),
    Launcher("colossalai", ("colossalai",), (), rank_vars=_TORCH),
    Launcher("python", (), (), rank_vars=f"{_TORCH},=0", starts_ranks=False),
    # A chosen actor waits for its client before its worker registers with the raylet,
    # which gives a worker 60 s and then kills it.
    Launcher("ray", ("ray",), (), ("raylet",), rank_vars=_TORCH, rank_end_fails=False,
             debug_env=(("RAY_worker_register_timeout_seconds", "86400"),)),
    # Horovod's own variables under its Gloo controller, Open MPI's under MPI.
    Launcher("horovodrun", ("horovodrun",), ("horovod.runner.launch",),
             rank_vars=f"HOROVOD_RANK/HOROVOD_LOCAL_RANK/HOROVOD_SIZE,{_MPI}", spreads=True),
    # Hugging Face's TPU launcher (`python xla_spawn.py`); torch_xla's PJRT numbers each
    # host's processes.
    Launcher("xla_spawn", (), (),
             rank_vars=f"PJRT_LOCAL_PROCESS_RANK/PJRT_LOCAL_PROCESS_RANK/PJRT_LOCAL_PROCESS_COUNT,"
                       f"{_TORCH}"),
    # Lightning Fabric numbers a node's processes (LOCAL_RANK; the first has none at its
    # start); under srun the tasks are Slurm's.
    Launcher("litgpt", ("litgpt",), ("litgpt",),
             rank_vars=f"{_TORCH},LOCAL_RANK/LOCAL_RANK/WORLD_SIZE,=0", starts_ranks=False),
    # Framework CLIs that start torchrun (or accelerate) themselves: their ranks carry
    # torchrun's variables; the CLI's own process (and the launcher it starts) none.
    # XTuner's `xtuner MODE`: torchrun when NNODES or NPROC_PER_NODE is above 1. Under srun
    # (`--launcher slurm`, XTuner's Slurm form) the ranks are srun's tasks.
    Launcher("xtuner", ("xtuner",), (), rank_vars=_TORCH, starts_ranks=False),
    # ms-swift's `swift sft|pt|rlhf|infer` and `megatron sft|pt|…`: `python -m
    # torch.distributed.run` when NPROC_PER_NODE or NNODES is set.
    Launcher("swift", ("swift", "megatron"), ("swift.cli.main", "swift.cli._megatron.main"),
             rank_vars=_TORCH, python_form=True),
    # Axolotl's `axolotl train|evaluate|…`: accelerate launch (its default) or torchrun, or
    # in its own process (`--launcher python`, `preprocess`).
    Launcher("axolotl", ("axolotl",), ("axolotl.cli.main",), rank_vars=_TORCH),
    # MosaicML Composer's launcher: one process per rank, RANK and the rest set for each.
    Launcher("composer", ("composer",), ("composer.cli", "composer.cli.launcher"),
             rank_vars=_TORCH, python_form=True),
    # A script whose Lightning Trainer(...)/Fabric(...) starts its processes: the script's own
    # process is rank 0 (no variable at its start), the copies it starts have LOCAL_RANK.
    # (Before fabric's row: the word `lightning` of a process is `lightning run model`.)
    Launcher("lightning", (), (), rank_vars=f"{_TORCH},LOCAL_RANK/LOCAL_RANK/WORLD_SIZE,=0",
             starts_ranks=False),
    # Lightning Fabric's `fabric run` (also `lightning run model`): torchrun's run() in its
    # own process.
    Launcher("fabric", ("fabric", "lightning"), ("lightning.fabric.cli", "lightning_fabric.cli"),
             rank_vars=_TORCH, default_master_port=29400),
    # A script that starts its own workers from a flag: detectron2's `launch()` (``--num-gpus
    # N --num-machines M``), torch.multiprocessing workers that get their rank as an argument,
    # not in the environment; with one process in all, the script's own process is the rank
    # (``in_launcher``).
    Launcher("detectron2", (), (), rank_vars=_TORCH, starts_ranks=False),
    Launcher(OTHER, (), (), starts_ranks=False),
)

BY_NAME: dict[str, Launcher] = {row.name: row for row in TABLE}
NAMES: tuple[str, ...] = tuple(BY_NAME)
RANK_LAUNCHERS = frozenset(row.name for row in TABLE if row.starts_ranks)
# Modules another launcher module handles (`python -m torch.distributed.run` is torchrun).
LAUNCHER_MODULES: tuple[str, ...] = tuple(m for row in TABLE for m in row.modules)

# Any word of a launcher's process (program, module or helper) → the launcher's name.
PROCESS_WORDS: dict[str, str] = {
    word: row.name
    for row in TABLE
    for word in (*row.programs, *row.modules, *row.helpers, row.name)
    if row.name not in ("python", OTHER)
}

# A Python interpreter's program name: python, python3, python3.11, pypy3, with the
# suffixes builds add (d: debug, m: pymalloc, t: free-threaded, w: Windows' GUI one).
PYTHON_NAME = r"(?:python|pypy)(?:\d+(?:\.\d+)*)?[dmtw]?"
_PYTHON = re.compile(PYTHON_NAME)


def is_python_name(name: str) -> bool:
    """Whether a program's basename names a Python interpreter (one rule for the command
    reader, the process scan and the smoke probe)."""
    return _PYTHON.fullmatch(name) is not None


_PROGRAMS = "|".join(re.escape(p) for row in TABLE for p in row.programs)
# A first word that is a launcher program (by basename), a python or a shell script.
LAUNCH_PROGRAM = re.compile(rf"(?:{_PROGRAMS}|{PYTHON_NAME}|[^/\s]+\.sh)")


def get(name: str) -> Launcher:
    """The row of ``name`` (``other``'s for names not in the table)."""
    return BY_NAME.get(name, BY_NAME[OTHER])


def python_module(name: str) -> str | None:
    """The ``python -m`` form of a launcher, when it has one."""
    row = BY_NAME.get(name)
    return row.modules[0] if row and row.python_form else None

"""Launchers added for issue 15: deepspeed's one-node fact, horovodrun, litgpt, xla_spawn.py,
and #SBATCH counts for srun."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankdebug.command import plan_text
from rankdebug.command.launchers import deepspeed
from rankdebug.command.plan import LaunchPlan


def numbers(plan: LaunchPlan) -> tuple[object, ...]:
    return (plan.launcher, plan.nnodes, plan.node_rank, plan.nproc_per_node, plan.world_size)


def entry(plan: LaunchPlan) -> tuple[object, ...]:
    target = (plan.entry.kind, plan.entry.target.display) if plan.entry else None
    return (target, [w.display for w in plan.entry_args])


def infos(plan: LaunchPlan, code: str) -> list[str]:
    return [d.message for d in plan.diagnostics if d.code == code and d.severity == "info"]


# ---- deepspeed without a hostfile --------------------------------------------------------


def test_deepspeed_without_a_hostfile_runs_on_this_node(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(deepspeed, "DEFAULT_HOSTFILE", str(tmp_path / "hostfile"))
    plan = plan_text("deepspeed --num_gpus 2 train.py\n", 1)
    assert numbers(plan) == ("deepspeed", 1, 0, 2, 2)
    assert infos(plan, "no-hostfile") == [
        f"no hostfile given and {tmp_path / 'hostfile'} does not exist here: DeepSpeed runs "
        "on this node only"]
    # A hostfile named on the command line says where it runs instead.
    named = plan_text("deepspeed -H hosts --num_gpus 2 train.py\n", 1, cwd=tmp_path)
    assert not any("does not exist here: DeepSpeed" in m for m in infos(named, "no-hostfile"))


def test_deepspeed_reads_the_default_hostfile_when_this_machine_has_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hostfile = tmp_path / "hostfile"
    hostfile.write_text("worker-1 slots=4\nworker-2 slots=4\n")
    monkeypatch.setattr(deepspeed, "DEFAULT_HOSTFILE", str(hostfile))
    plan = plan_text("deepspeed train.py\n", 1)
    assert numbers(plan) == ("deepspeed", 2, None, 4, 8)
    assert infos(plan, "no-hostfile") == []


def test_deepspeed_default_hostfile_that_cannot_be_read(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # A folder where the hostfile should be: it exists, and no hostfile can be read from it.
    monkeypatch.setattr(deepspeed, "_exists", lambda path: True)
    monkeypatch.setattr(deepspeed, "DEFAULT_HOSTFILE", str(tmp_path))
    plan = plan_text("deepspeed --num_gpus 2 train.py\n", 1)
    assert plan.nnodes is None and any("cannot be read here" in w for w in plan.warnings)


# ---- #SBATCH counts for srun ---------------------------------------------------------------


@pytest.mark.parametrize(("directives", "srun", "expected"), [
    ("--nodes=2\n#SBATCH --ntasks-per-node=4", "srun", (2, 4, 8)),
    ("-N 2\n#SBATCH --ntasks-per-node 4", "srun", (2, 4, 8)),
    ("-N2\n#SBATCH -n 8", "srun", (2, 4, 8)),
    ("--nodes=2 --ntasks-per-node=4", "srun --ntasks-per-node=1", (2, 1, 2)),
    ("--nodes=4\n#SBATCH --ntasks-per-node=8\n#SBATCH --gres=gpu:8", "srun --ntasks=32",
     (4, 8, 32)),
    ("--nodes=2\n#SBATCH --gpus-per-node=4\n#SBATCH --ntasks-per-gpu=1", "srun", (2, 4, 8)),
    ("--nodes=2\n#SBATCH --gres=gpu:a100:2\n#SBATCH --ntasks-per-gpu=2", "srun", (2, 4, 8)),
    ("--nodes=2", "srun --gpus-per-node=8 --ntasks-per-gpu=1", (2, 8, 16)),
    ("--nodes=2\n#SBATCH --ntasks-per-gpu=2", "srun", (2, None, None)),
])
def test_sbatch_lines_give_the_counts_of_srun(directives: str, srun: str,
                                              expected: tuple[object, ...]) -> None:
    script = f"#!/bin/bash\n#SBATCH {directives}\n{srun} python train.py --x 1\n"
    plan = plan_text(script, script.count("\n"))
    assert (plan.nnodes, plan.nproc_per_node, plan.world_size) == expected
    assert entry(plan) == (("script", "train.py"), ["--x", "1"])


def test_srun_on_gpu_nodes_without_a_task_count_says_one_task_per_node() -> None:
    for gpus in ("--gpus-per-node=8", "--gres=gpu:8"):
        plan = plan_text(f"#SBATCH --nodes=2\n#SBATCH {gpus}\nsrun python train.py\n", 3)
        assert numbers(plan) == ("srun", 2, None, 1, 2)
        assert infos(plan, "one-task-per-node") == [
            "srun starts one task on each node, which has 8 GPUs; --ntasks-per-node=8 (or "
            "--ntasks-per-gpu=1) starts one per GPU"]


def test_code_srun_runs_sees_the_per_task_variables_as_unknown() -> None:
    plan = plan_text("#SBATCH -N 2 --ntasks-per-node=4\n"
                     "srun bash -c 'python train.py --rank $SLURM_PROCID'\n", 2)
    assert numbers(plan)[1:] == (2, None, 4, 8)
    assert [w.display for w in plan.entry_args] == ["--rank", "$SLURM_PROCID"]
    assert "srun sets $SLURM_PROCID for each task" in plan.warnings

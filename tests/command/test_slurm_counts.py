"""The counts a Slurm job would get: scontrol's host names as a batch script reads them,
arithmetic over SLURM_*, and srun's own rule for a task count that does not fit the
tasks per node it inherited."""

from __future__ import annotations

import pytest

from rankdebug.command import plan_text

HEADER = "#!/bin/bash\n#SBATCH --nodes=4\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=8\n"


def numbers(text: str, line: int, env: dict[str, str] | None = None) -> tuple[object, ...]:
    p = plan_text(text, line, caller_env=env, env_complete=False)
    return p.launcher, p.nnodes, p.nproc_per_node, p.world_size


@pytest.mark.parametrize("count", [
    'N=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | wc -l)',
    "N=$(scontrol show hostnames $SLURM_JOB_NODELIST | wc -l)",
    "N=$(scontrol show hostname ${SLURM_NODELIST} | wc -l)",
    "N=$(scontrol show hostnames | wc -l)",
    "N=$((SLURM_NNODES))",
])
def test_node_count_from_the_allocation(count: str) -> None:
    text = HEADER + count + "\nsrun torchrun --nnodes $N --nproc_per_node 8 train.py\n"
    assert numbers(text, 6) == ("torchrun", 4, 8, 32)


def test_a_known_node_list_is_read() -> None:
    text = ('A=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)\n'
            'N=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | wc -l)\n'
            "torchrun --nnodes $N --nproc_per_node 2 --master_addr $A --node_rank 0 t.py\n")
    plan = plan_text(text, 3, caller_env={"SLURM_JOB_NODELIST": "rack1-n[08-10],gpu7"},
                     env_complete=False)
    assert (plan.nnodes, plan.world_size) == (4, 8)
    assert plan.master_addr is not None and plan.master_addr.value == "rack1-n08"
    # Another list than the job's: its own names, however many nodes the job has.
    other = HEADER + "N=$(scontrol show hostnames node[1-2] | wc -l)\ntorchrun --nnodes $N t.py\n"
    assert numbers(other, 6)[1] == 2


def test_what_cannot_be_known_says_why() -> None:
    text = ('A=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)\n'
            "torchrun --nnodes 2 --master_addr $A --node_rank 0 t.py\n")
    plan = plan_text(text, 2)
    assert any("the job's first node is known only when it runs" in w for w in plan.warnings)
    # Not a form read here: the generic reason.
    text = "N=$(scontrol show hostnames | sort | wc -l)\ntorchrun --nnodes $N t.py\n"
    assert any("is a command; it is not run" in w for w in plan_text(text, 2).warnings)


def test_srun_task_count_that_does_not_fit_the_inherited_per_node() -> None:
    text = HEADER + "srun --ntasks=$((SLURM_NNODES * 8)) --gpus-per-task=1 python t.py\n"
    plan = plan_text(text, 5)
    assert (plan.nnodes, plan.nproc_per_node, plan.world_size) == (4, 8, 32)
    assert [d.code for d in plan.diagnostics if d.severity == "info"][:1] == [
        "ntasks-per-node-ignored"]
    # When it fits, nothing is said.
    fits = HEADER + "srun --ntasks=4 python t.py\n"
    plan = plan_text(fits, 5)
    assert (plan.nproc_per_node, plan.world_size) == (1, 4)
    assert not [d for d in plan.diagnostics if d.code == "ntasks-per-node-ignored"]

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

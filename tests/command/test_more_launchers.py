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


# ---- horovodrun ----------------------------------------------------------------------------


@pytest.mark.parametrize(("command", "expected"), [
    ("horovodrun -np 4 -H localhost:4 python train.py", (1, 0, 4, 4)),
    ("horovodrun -np 4 python train.py", (1, 0, 4, 4)),  # localhost:NP
    ("horovodrun -np 8 -H server1:4,server2:4 python train.py", (2, None, 4, 8)),
    # Slots fill in order: 4 on server1, 2 on server2.
    ("horovodrun -np 6 -H server1:4,server2:4 python train.py", (2, None, None, 6)),
    ("horovodrun -np 2 -H server1:4,server2:4 python train.py", (1, 0, 2, 2)),
    ("horovodrun --num-proc=8 --hosts=a:2,b:2,c:2,d:2 --gloo python train.py", (4, None, 2, 8)),
    ("horovodrun -np 4 -hostfile hostfiles/horovod_hosts python train.py", (2, None, 2, 4)),
    ("python -m horovod.runner.launch -np 2 python train.py", (1, 0, 2, 2)),
])
def test_horovodrun_counts(command: str, expected: tuple[object, ...], tmp_path: Path) -> None:
    (tmp_path / "hostfiles").mkdir()
    (tmp_path / "hostfiles" / "horovod_hosts").write_text("gpu1 slots=2\ngpu2 slots=2\n")
    (tmp_path / "train.py").write_text("")
    plan = plan_text(command + " --epochs 3\n", 1, cwd=tmp_path)
    assert numbers(plan) == ("horovodrun", *expected)
    assert entry(plan) == (("script", "train.py"), ["--epochs", "3"])
    assert plan.warnings == []


@pytest.mark.parametrize(("command", "message"), [
    ("horovodrun -np 16 -H a:4,b:4 python t.py", "more than the 8 slots"),
    ("horovodrun -np 4 -H a,b python t.py", "needs host:slots"),
    ("horovodrun -H a:4 python t.py", "needs -np"),
    ("horovodrun -np 4 --min-np 2 --host-discovery-script ./hosts.sh python t.py",
     "elastic"),
    ("horovodrun -np $NP python t.py", "-np is $NP, which is not known"),
    ("horovodrun -np 4 -hostfile missing python t.py", "cannot be read here"),
])
def test_horovodrun_unknowns_say_why(command: str, message: str) -> None:
    plan = plan_text(command + "\n", 1)
    assert plan.launcher == "horovodrun" and plan.world_size is None
    assert any(message in w for w in plan.warnings), plan.warnings


def test_horovodrun_check_build_starts_nothing() -> None:
    plan = plan_text("horovodrun -cb\n", 1)
    assert plan.world_size is None and infos(plan, "no-launch")


# ---- xla_spawn.py --------------------------------------------------------------------------


def test_xla_spawn_runs_num_cores_processes_of_the_script() -> None:
    plan = plan_text("python examples/pytorch/xla_spawn.py --num_cores 8 "
                     "examples/pytorch/text-classification/run_glue.py --model_name_or_path "
                     "bert-base-cased --do_train\n", 1)
    assert numbers(plan) == ("xla_spawn", 1, 0, 8, 8)
    assert entry(plan) == (("script", "examples/pytorch/text-classification/run_glue.py"),
                           ["--model_name_or_path", "bert-base-cased", "--do_train"])
    assert infos(plan, "entry-function") and infos(plan, "runtime-decides")
    one = plan_text("python3 xla_spawn.py --num=1 run_mlm.py\n", 1)  # argparse abbreviation
    assert numbers(one) == ("xla_spawn", 1, 0, 1, 1) and not infos(one, "runtime-decides")
    assert numbers(plan_text("python xla_spawn.py run_mlm.py\n", 1))[3:] == (1, 1)
    assert numbers(plan_text("srun python xla_spawn.py --num_cores 8 t.py\n", 1))[0] == (
        "xla_spawn")


# ---- litgpt --------------------------------------------------------------------------------


@pytest.mark.parametrize(("command", "expected"), [
    ("litgpt pretrain pythia-14m --devices 2 --train.max_tokens 100", (1, 0, 2, 2)),
    ("litgpt finetune_lora microsoft/phi-2 --devices 4 --num_nodes 2", (2, None, 4, 8)),
    ("NODE_RANK=1 litgpt finetune_lora phi-2 --devices=4 --num_nodes=2", (2, 1, 4, 8)),
    ("litgpt finetune microsoft/phi-2", (1, 0, 1, 1)),
    ("litgpt finetune_full phi-2 --precision bf16-true --devices 8", (1, 0, 8, 8)),
    ("CUDA_VISIBLE_DEVICES=0,1,2 litgpt pretrain pythia-14m", (1, 0, 3, 3)),
    ("CUDA_VISIBLE_DEVICES=0,1 litgpt finetune_adapter x --devices auto", (1, 0, 2, 2)),
    ("litgpt chat microsoft/phi-2", (1, 0, 1, 1)),
    ("litgpt download EleutherAI/pythia-14m", (1, 0, 1, 1)),
    ("CUDA_VISIBLE_DEVICES=0,1,2,3 litgpt generate_tp phi-2", (1, 0, 4, 4)),
    ("litgpt pretrain --config cfg.yaml", (2, None, 4, 8)),
    ("litgpt pretrain --config cfg.yaml --devices 2", (2, None, 2, 4)),
    ("litgpt pretrain --devices 2 --config cfg.yaml", (2, None, 4, 8)),
])
def test_litgpt_counts(command: str, expected: tuple[object, ...], tmp_path: Path) -> None:
    (tmp_path / "cfg.yaml").write_text("model_name: pythia-14m\ndevices: 4\nnum_nodes: 2\n")
    plan = plan_text(command + "\n", 1, cwd=tmp_path)
    assert numbers(plan) == ("litgpt", *expected)
    assert plan.entry is not None and plan.entry.target.display == "litgpt"
    subcommand = command.split("litgpt ")[1].split(maxsplit=1)[0]
    assert plan.entry_args[0].display == subcommand


@pytest.mark.parametrize(("command", "message"), [
    ("litgpt pretrain pythia-14m", "depends on how many GPUs"),
    ("litgpt pretrain m --devices 8 $EXTRA", "--num_nodes is not given, and $EXTRA may set it"),
    ("litgpt pretrain --config missing.yaml", "cannot be read here"),
    ("litgpt finetune m --devices $N", "--devices is $N, which is not known"),
])
def test_litgpt_unknowns_say_why(command: str, message: str) -> None:
    plan = plan_text(command + "\n", 1)
    assert plan.launcher == "litgpt" and plan.world_size is None
    assert any(message in w for w in plan.warnings), plan.warnings


def test_litgpt_under_srun_is_sruns_tasks() -> None:
    plan = plan_text("#SBATCH --nodes=2 --ntasks-per-node=4\n"
                     "srun litgpt pretrain m --devices 4 --num_nodes 2\n", 2)
    assert numbers(plan) == ("srun", 2, None, 4, 8)
    assert plan.entry is not None and plan.entry.target.display == "litgpt"
    module = plan_text("python -m litgpt finetune_full x --devices=2\n", 1)
    assert module.entry is not None
    assert (module.entry.kind, module.entry.target.display) == ("module", "litgpt")


# ---- framework wrapper scripts ------------------------------------------------------------

MSRUN_LAUNCHER = Path(__file__).resolve().parent.parent / "corpus" / "scripts" / (
    "msrun_launcher.sh")


@pytest.mark.parametrize(("args", "expected", "flags"), [
    ('"run_mindformer.py --config c.yaml"', (1, 0, 8, 8),
     ["--worker_num=8", "--local_worker_num=8", "--master_port=8118",
      "--log_dir=output/msrun_log", "--join=False", "--cluster_time_out=7200"]),
    ('"run_mindformer.py --config c.yaml" 4', (1, 0, 4, 4),
     ["--worker_num=4", "--local_worker_num=4", "--master_port=8118",
      "--log_dir=output/msrun_log", "--join=False", "--cluster_time_out=7200"]),
    ('"run_mindformer.py --config c.yaml" 4 8999 out/log True 300', (1, 0, 4, 4),
     ["--worker_num=4", "--local_worker_num=4", "--master_port=8999", "--log_dir=out/log",
      "--join=True", "--cluster_time_out=300"]),
    ('"run_mindformer.py --config c.yaml" 16 8 192.168.1.1 8118 1 out/log False 300',
     (2, 1, 8, 16),
     ["--worker_num=16", "--local_worker_num=8", "--master_addr=192.168.1.1",
      "--master_port=8118", "--node_rank=1", "--log_dir=out/log", "--join=False",
      "--cluster_time_out=300"]),
    ('"run_mindformer.py --config c.yaml" 8 8 192.168.1.1 8118 0 out/log False 300',
     (1, 0, 8, 8),
     ["--worker_num=8", "--local_worker_num=8", "--master_port=8118", "--log_dir=out/log",
      "--join=False", "--cluster_time_out=300"]),
])
def test_msrun_launcher_followed_or_known_by_convention(
        args: str, expected: tuple[object, ...], flags: list[str], tmp_path: Path) -> None:
    """The same arguments planned through mindformers' real script and by its convention
    when the script is not there: the same msrun command."""
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "msrun_launcher.sh").write_bytes(MSRUN_LAUNCHER.read_bytes())
    command = f"bash scripts/msrun_launcher.sh {args}\n"
    followed = plan_text(command, 1, cwd=tmp_path, caller_env={"PATH": "/usr/bin"})
    known = plan_text(command.replace("scripts/", "absent/"), 1, cwd=tmp_path,
                      caller_env={"PATH": "/usr/bin"})
    assert (followed.followed or "").startswith("scripts/msrun_launcher.sh:")
    assert any(d.code == "convention" for d in known.diagnostics)
    for plan in (followed, known):
        assert numbers(plan) == ("msrun", *expected)
        assert entry(plan) == (("script", "run_mindformer.py"), ["--config", "c.yaml"])
        assert [w.value for w in plan.argv] == ["msrun", *flags, "run_mindformer.py",
                                               "--config", "c.yaml"]


def test_msrun_launcher_convention_keeps_unknowns_and_says_misuse() -> None:
    plan = plan_text('bash ${MF}/scripts/msrun_launcher.sh "python ds_infer.py --yaml '
                     '${MF}/p.yaml" 16 8 ${MASTER_IP} 8432 ${NODE_ID} out False 300\n', 1)
    assert numbers(plan) == ("msrun", 2, None, 8, 16)
    assert entry(plan) == (("script", "ds_infer.py"), ["--yaml", "${MF}/p.yaml"])
    assert any("--node_rank is ${NODE_ID}, which is not known" in w for w in plan.warnings)
    bad = plan_text('bash x/msrun_launcher.sh "run.py" 4 8999\n', 1)
    assert bad.launcher == "other"
    assert [d.severity for d in bad.diagnostics if d.code == "wrapper-usage"] == ["error"]
    assert any("takes 1, 2, 6 or 9 arguments, not 3" in w for w in bad.warnings)
    nan = plan_text('bash x/msrun_launcher.sh "run.py" eight\n', 1)
    assert any("worker_num=eight is not a number" in w for w in nan.warnings)

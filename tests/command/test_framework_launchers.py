"""Framework CLIs that start a launcher or their own workers (XTuner, ms-swift, Axolotl,
Composer, Lightning Fabric, detectron2-style scripts): each rule of their own source, one at
a time (the modules cite the files)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_launcher_modules import args, diags, env_of, numbers, plan, target, words

from rankdebug.command.launchers import find_launcher
from rankdebug.command.plan import LaunchPlan


def codes(p: LaunchPlan) -> list[tuple[str, str]]:
    return [(d.severity, d.code) for d in p.diagnostics]


# -- XTuner (xtuner/entry_point.py) ---------------------------------------------------------


def test_xtuner_runs_torchrun_when_a_count_is_above_one() -> None:
    p = plan("xtuner train internlm2_chat_7b_qlora_oasst1_e3 --deepspeed deepspeed_zero2",
             env_of(NPROC_PER_NODE="8"))
    assert (p.launcher, numbers(p), p.in_launcher) == ("xtuner", (1, 0, 8, 8), False)
    assert target(p) == ("cli", "train")
    assert args(p) == ["internlm2_chat_7b_qlora_oasst1_e3", "--deepspeed", "deepspeed_zero2"]
    assert p.master_addr is not None and p.master_addr.value == "127.0.0.1"  # ADDR's default
    assert not p.diagnostics
    p = plan("xtuner train cfg.py", env_of(NPROC_PER_NODE="8", NNODES="2", NODE_RANK="1",
                                             ADDR="10.0.0.1", PORT="29600"))
    assert numbers(p) == (2, 1, 8, 16)
    assert (p.master_addr.display, p.master_port.display) == ("10.0.0.1", "29600")  # type: ignore[union-attr]
    # NNODES alone above 1 is torchrun too (one process per node).
    assert numbers(plan("xtuner train c.py", env_of(NNODES="2"))) == (2, 0, 1, 2)


def test_xtuner_with_one_process_runs_a_child_without_a_rank_variable() -> None:
    p = plan("xtuner train cfg.py")
    assert numbers(p) == (1, 0, 1, 1) and not p.in_launcher
    [d] = diags(p, "rank-in-child")
    assert "python -m xtuner.tools.train" in d.message
    p = plan("xtuner convert pth_to_hf cfg.py x.pth out", env_of(NPROC_PER_NODE="1"))
    assert target(p) == ("cli", "pth_to_hf") and args(p) == ["cfg.py", "x.pth", "out"]
    assert "xtuner.tools.model_converters.pth_to_hf" in diags(p, "rank-in-child")[0].message
    # --launcher slurm: one process in this task, whatever NPROC_PER_NODE says.
    p = plan("xtuner train cfg.py --launcher slurm", env_of(NPROC_PER_NODE="8"))
    assert numbers(p) == (1, 0, 1, 1) and diags(p, "slurm-tasks")


def test_xtuner_slips_are_said() -> None:
    p = plan("xtuner trian cfg.py")
    [d] = diags(p, "unknown-command")
    assert (d.severity, d.fix) == ("error", "train") and "did you mean train" in d.message
    assert diags(plan("xtuner convert"), "missing-entry")
    assert diags(plan("xtuner convert pth2hf a"), "unknown-command")
    p = plan("xtuner train cfg.py", env_of(NPROC_PER_NODE="eight"))
    assert numbers(p)[3] is None and diags(p, "bad-value")
    assert plan("xtuner help").launcher == "other"
    assert plan("xtuner --version").launcher == "other"


def test_xtuner_variables_set_but_not_exported() -> None:
    p = plan("xtuner train cfg.py", shell_vars=env_of(NPROC_PER_NODE="8"))
    assert diags(p, "not-exported") and numbers(p) == (1, 0, 1, 1)


def test_xtuner_under_srun_is_sruns_tasks() -> None:
    p = plan("srun -N 2 --ntasks-per-node 8 xtuner train cfg.py --launcher slurm")
    assert p.launcher == "srun" and p.world_size == 16
    # Each task's xtuner process holds the task's rank variables; its tool runs in a child.
    [d] = diags(p, "rank-in-child")
    assert "python -m xtuner.tools.train" in d.message


# -- ms-swift (swift/cli/main.py) ----------------------------------------------------------


def test_swift_runs_torchrun_when_nproc_or_nnodes_is_set() -> None:
    p = plan("swift sft --model Qwen/Qwen2.5-7B-Instruct --train_type lora",
             env_of(NPROC_PER_NODE="4", CUDA_VISIBLE_DEVICES="0,1,2,3"))
    assert (p.launcher, numbers(p), target(p)) == ("swift", (1, 0, 4, 4), ("cli", "sft"))
    assert args(p) == ["--model", "Qwen/Qwen2.5-7B-Instruct", "--train_type", "lora"]
    # NNODES alone: torchrun with its own default of one process per node.
    assert numbers(plan("swift rlhf --rlhf_type grpo", env_of(NNODES="2"))) == (2, 0, 1, 2)
    # torchrun reads what swift hands on: MIN:MAX, and PET_* for what it does not.
    p = plan("swift pt --model m", env_of(NNODES="1:4", NPROC_PER_NODE="8"))
    assert p.nnodes_range == (1, 4) and p.world_size is None
    p = plan("swift sft --model m", env_of(NNODES="2", PET_NPROC_PER_NODE="4"))
    assert numbers(p) == (2, 0, 4, 8)
    p = plan("megatron sft --load x", env_of(NPROC_PER_NODE="8", NNODES="2", NODE_RANK="1",
                                              MASTER_ADDR="h0", MASTER_PORT="29500"))
    assert (p.launcher, numbers(p), p.master_addr.display) == ("swift", (2, 1, 8, 16), "h0")  # type: ignore[union-attr]
    p = plan("python -m swift.cli.main infer --model m", env_of(NPROC_PER_NODE="2"))
    assert (p.launcher, p.world_size) == ("swift", 2)


def test_swift_methods_that_never_use_torchrun_and_single_process() -> None:
    p = plan("swift deploy --model m", env_of(NPROC_PER_NODE="4"))
    assert numbers(p) == (1, 0, 1, 1)
    assert "never runs under torchrun" in diags(p, "rank-in-child")[0].message
    p = plan("swift sft --model m")
    assert "python -m swift.cli.sft" in diags(p, "rank-in-child")[0].message
    # megatron's export does use torchrun; swift's does not.
    assert plan("megatron export --load x", env_of(NPROC_PER_NODE="2")).world_size == 2
    assert plan("swift export --model m", env_of(NPROC_PER_NODE="2")).world_size == 1
    # `_` reads as `-`; an unknown method is refused as swift refuses it.
    assert target(plan("swift merge_lora --ckpt_dir d")) == ("cli", "merge_lora")
    [d] = diags(plan("swift sfx --model m"), "unknown-command")
    assert d.fix == "sft" and d.severity == "error"
    assert diags(plan("megatron infer --model m"), "unknown-command")


def test_swift_config_file_env_sets_what_is_not_set(tmp_path: Path) -> None:
    (tmp_path / "sft.yaml").write_text("ENV:\n  NPROC_PER_NODE: 4\n  NNODES: 2\n"
                                       "model: Qwen/Qwen2.5-7B\n")
    p = plan("swift sft sft.yaml", cwd=tmp_path)
    assert numbers(p) == (2, 0, 4, 8) and diags(p, "config-env")
    # The environment wins over the file's ENV.
    p = plan("swift sft sft.yaml", env_of(NPROC_PER_NODE="2"), cwd=tmp_path)
    assert numbers(p) == (2, 0, 2, 4)
    (tmp_path / "sft.json").write_text('{"ENV": {"NPROC_PER_NODE": "3"}}')
    assert plan("swift sft sft.json", cwd=tmp_path).world_size == 3
    p = plan("swift sft missing.yaml", cwd=tmp_path)
    assert diags(p, "unreadable-file") and p.world_size == 1


# -- Axolotl (src/axolotl/cli/main.py, cli/utils/train.py) --------------------------------


def test_axolotl_train_hands_launcher_args_to_accelerate_or_torchrun() -> None:
    p = plan("axolotl train config.yml --launcher torchrun -- --nproc_per_node=2 --nnodes=1")
    assert (p.launcher, numbers(p), p.in_launcher) == ("axolotl", (1, 0, 2, 2), False)
    assert target(p) == ("module", "axolotl.cli.train") and args(p) == ["config.yml"]
    assert {o.name for o in p.options} >= {"launcher", "nproc_per_node", "nnodes"}
    p = plan("axolotl train config.yml -- --num_processes 4 --num_machines 2 "
             "--machine_rank 1")
    assert numbers(p) == (2, 1, 2, 4)  # accelerate, the default: --num_processes is the total
    # Options axolotl does not know go to the launcher too; config overrides stay.
    p = plan("axolotl train config.yml --num-processes 2 --learning-rate 1e-4",
             env_of(CUDA_VISIBLE_DEVICES="0,1"))
    assert numbers(p) == (1, 0, 2, 2) and args(p) == ["config.yml", "--learning-rate", "1e-4"]
    p = plan("axolotl evaluate config.yml --launcher torchrun --nproc_per_node 4 --lr 3")
    assert (numbers(p), args(p)) == ((1, 0, 4, 4), ["config.yml", "--lr", "3"])
    assert target(p) == ("module", "axolotl.cli.evaluate")


def test_axolotl_without_launcher_args_reads_accelerates_default_config(tmp_path: Path) -> None:
    p = plan("axolotl train config.yml", env_of(CUDA_VISIBLE_DEVICES="0,1"))
    assert p.world_size is None and any("one process per GPU" in m for m in p.warnings)
    conf = tmp_path / "hf" / "accelerate"
    conf.mkdir(parents=True)
    (conf / "default_config.yaml").write_text("num_processes: 8\nnum_machines: 1\n")
    p = plan("axolotl train config.yml", env_of(HF_HOME=str(tmp_path / "hf")))
    assert numbers(p) == (1, 0, 8, 8) and diags(p, "default-config")


def test_axolotl_in_its_own_process() -> None:
    for command in ("axolotl train config.yml --launcher python",
                    "axolotl preprocess config.yml", "python -m axolotl.cli.main merge-lora c.yml"):
        p = plan(command)
        assert (numbers(p), p.in_launcher) == ((1, 0, 1, 1), True), command
    p = plan("axolotl train config.yml --use-ray")
    assert p.world_size is None and not p.in_launcher and diags(p, "ray-workers")


def test_axolotl_slips(tmp_path: Path) -> None:
    assert [d.severity for d in diags(plan("axolotl train"), "missing-config")] == ["error"]
    (tmp_path / "there.yml").write_text("base_model: x\n")
    assert not diags(plan("axolotl train there.yml", cwd=tmp_path), "missing-config")
    assert diags(plan("axolotl train gone.yml", cwd=tmp_path), "missing-config")
    p = plan("axolotl train c.yml --launcher deepspeed")
    assert ("error", "bad-value") in codes(p)
    p = plan("axolotl train c.yml --launcher torchrun -- --nproc_per_node 2 oops.py")
    assert any("oops.py" in d.message and d.severity == "error" for d in p.diagnostics)
    [d] = diags(plan("axolotl trian c.yml"), "unknown-command")
    assert d.fix == "train"
    assert plan("axolotl --version").launcher == "other"


# -- Composer (composer/cli/launcher.py) ----------------------------------------------------


def test_composer_counts() -> None:
    p = plan("composer -n 8 train.py --lr 1")
    assert (p.launcher, numbers(p), target(p), args(p)) == (
        "composer", (1, 0, 8, 8), ("script", "train.py"), ["--lr", "1"])
    p = plan("composer -n 8 --world_size 16 --node_rank 1 --master_addr h --master_port 7501 "
             "train.py")
    assert numbers(p) == (2, 1, 8, 16) and not diags(p, "missing-value")
    # base_rank gives the node rank; abbreviations are argparse's.
    assert numbers(plan("composer --npr 4 --world 8 --base_rank 4 --master_a h --master_p 1 "
                        "t.py")) == (2, 1, 4, 8)
    # LOCAL_WORLD_SIZE and WORLD_SIZE from the environment; the GPU count by default.
    p = plan("composer t.py", env_of(LOCAL_WORLD_SIZE="2", WORLD_SIZE="4", NODE_RANK="1",
                                      MASTER_ADDR="h", MASTER_PORT="1"))
    assert numbers(p) == (2, 1, 2, 4)
    assert numbers(plan("composer t.py", env_of(CUDA_VISIBLE_DEVICES="0,1,2"))) == (1, 0, 3, 3)
    assert plan("composer t.py", env_of(CUDA_VISIBLE_DEVICES="")).world_size == 1  # 0 GPUs: 1
    assert plan("composer t.py").world_size is None
    assert target(plan("composer -m -n 2 pkg.train")) == ("module", "pkg.train")
    assert target(plan("python -m composer.cli -c -n 2 ./run.sh")) == ("cli", "./run.sh")


def test_composer_refusals_are_errors() -> None:
    p = plan("composer -n 8 --world_size 16 train.py")
    assert [d.severity for d in diags(p, "missing-value")] == ["error"] * 3
    assert ("error", "bad-value") in codes(plan("composer -n 8 --world_size 4 t.py"))
    assert ("error", "bad-value") in codes(plan("composer -n 2 --node_rank 1 t.py"))
    assert ("error", "bad-value") in codes(plan("composer -n 0 t.py"))
    assert ("error", "conflict") in codes(plan("composer -m -c -n 2 t.py"))
    assert ("error", "uneven") in codes(plan("composer -n 3 --world_size 8 --base_rank 3 "
                                             "--master_addr h --master_port 1 t.py"))


# -- Lightning Fabric (src/lightning/fabric/cli.py) ----------------------------------------


@pytest.mark.parametrize(("command", "expected", "entry_args"), [
    ("fabric run train.py --devices 2", (1, 0, 2, 2), []),
    ("fabric run --devices 2 --num-nodes 2 --node-rank 1 train.py --lr 1 --strategy ddp",
     (2, 1, 2, 4), ["--lr", "1"]),
    ("fabric run model --accelerator cuda --devices 0,1,3 train.py", (1, 0, 3, 3), []),
    ("lightning run model --devices=4 --num_nodes=2 train.py --x", (2, 0, 4, 8), ["--x"]),
    ("python -m lightning.fabric.cli train.py --devices 2", (1, 0, 2, 2), []),
    ("fabric run --strategy dp --devices 4 train.py", (1, 0, 1, 1), []),
    ("fabric run --devices auto train.py", (1, 0, 1, 1), []),
    ("fabric run train.py -- --devices 2", (1, 0, 1, 1), ["--devices", "2"]),
    ("fabric run train.py", (1, 0, 1, 1), []),
])
def test_fabric_counts(command: str, expected: tuple[object, ...], entry_args: list[str]
                       ) -> None:
    p = plan(command)
    assert (p.launcher, numbers(p), target(p), args(p)) == (
        "fabric", expected, ("script", "train.py"), entry_args)
    assert not [d for d in p.diagnostics if d.severity != "info"]


def test_fabric_rendezvous_and_devices_from_the_machine() -> None:
    p = plan("fabric run --main-address 10.1.1.1 --main-port 1234 --devices 2 t.py")
    assert (p.master_addr.display, p.master_port.display) == ("10.1.1.1", "1234")  # type: ignore[union-attr]
    p = plan("fabric run t.py")
    assert (p.master_addr.display, p.master_port.display) == ("127.0.0.1", "29400")  # type: ignore[union-attr]
    p = plan("fabric run --devices -1 t.py", env_of(CUDA_VISIBLE_DEVICES="0,1"))
    assert p.world_size == 2
    assert plan("fabric run --devices -1 t.py").world_size is None


def test_fabric_slips() -> None:
    p = plan("fabric run --device 2 train.py")
    [d] = diags(p, "unknown-flag")
    assert (d.severity, d.fix) == ("error", "--devices")
    assert ("error", "bad-value") in codes(plan("fabric run --accelerator tpu --devices 8 t.py"))
    assert ("error", "bad-value") in codes(plan("fabric run --strategy ddp_spawn t.py"))
    assert ("error", "bad-value") in codes(plan("fabric run --accelerator cpu --devices 0,1 t.py"))
    assert ("error", "missing-value") in codes(plan("fabric run t.py --devices"))
    assert diags(plan("fabric run"), "missing-entry")
    assert plan("fabric consolidate ckpt").launcher == "other"
    assert plan("lightning run app x.py").launcher == "other"


# -- detectron2's launch() (detectron2/engine/defaults.py, launch.py) -------------------------

_TRAIN_NET = """from detectron2.engine import default_argument_parser, default_setup, launch

def main(args):
    pass

if __name__ == "__main__":
    args = default_argument_parser().parse_args()
    launch(main, args.num_gpus, num_machines=args.num_machines,
           machine_rank=args.machine_rank, dist_url=args.dist_url, args=(args,))
"""


def test_detectron2_script_spawns_num_gpus_workers(tmp_path: Path) -> None:
    (tmp_path / "train_net.py").write_text(_TRAIN_NET)
    p = plan("python train_net.py --num-gpus 8 --config-file cfg.yaml SOLVER.IMS_PER_BATCH 16",
             cwd=tmp_path)
    assert (p.launcher, numbers(p), p.in_launcher) == ("detectron2", (1, 0, 8, 8), False)
    assert target(p) == ("script", "train_net.py")
    assert args(p) == ["--num-gpus", "8", "--config-file", "cfg.yaml", "SOLVER.IMS_PER_BATCH",
                       "16"]
    assert diags(p, "rank-not-in-env")
    p = plan("python train_net.py --num-gpus 4 --num-machines 2 --machine-rank 1 "
             "--dist-url tcp://10.0.0.1:5000", cwd=tmp_path)
    assert numbers(p) == (2, 1, 4, 8)
    assert (p.master_addr.display, p.master_port.display) == ("10.0.0.1", "5000")  # type: ignore[union-attr]
    # One process in all: the main function runs in the script's own process (rank 0).
    p = plan("python train_net.py --config-file c.yaml --eval-only", cwd=tmp_path)
    assert (p.launcher, numbers(p), p.in_launcher) == ("detectron2", (1, 0, 1, 1), True)
    # After the first override, --num-gpus is an override too (argparse REMAINDER).
    assert plan("python train_net.py A.B 1 --num-gpus 8", cwd=tmp_path).world_size == 1


def test_detectron2_script_run_by_its_shebang(tmp_path: Path) -> None:
    (tmp_path / "train_net.py").write_text("#!/usr/bin/env python\n" + _TRAIN_NET)
    p = plan("./train_net.py --num-gpus 2", cwd=tmp_path)
    assert (p.launcher, numbers(p), target(p)) == ("detectron2", (1, 0, 2, 2),
                                                     ("script", "./train_net.py"))
    (tmp_path / "other.py").write_text("print(1)\n")
    assert plan("./other.py --num-gpus 2", cwd=tmp_path).launcher == "other"


def test_a_script_that_cannot_be_read_is_one_process_with_a_note(tmp_path: Path) -> None:
    p = plan("python elsewhere/train_net.py --num-gpus 8", cwd=tmp_path)
    assert (p.launcher, p.world_size) == ("python", 1) and diags(p, "unreadable-file")
    (tmp_path / "plain.py").write_text("import argparse\nprint('launch(' )\n")
    assert plan("python plain.py --num-gpus 8", cwd=tmp_path).launcher == "python"


def test_the_new_programs_and_modules_are_found() -> None:
    for command, name in (("xtuner train c", "xtuner"), ("megatron pt --load x", "swift"),
                          ("python -m swift.cli._megatron.main sft", "swift"),
                          ("python -m axolotl.cli.main train c.yml", "axolotl"),
                          ("python -m composer.cli.launcher -n 2 t.py", "composer"),
                          ("python -m lightning_fabric.cli t.py", "fabric"),
                          ("env A=1 nohup fabric run t.py", "fabric")):
        found = find_launcher(words(command), 0)
        assert command.startswith("env") or found is not None, command
        p = plan(command)
        assert p.launcher == name, command

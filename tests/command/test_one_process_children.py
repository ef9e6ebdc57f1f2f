"""A job of one process that a CLI runs in a child python with no rank variable
(accelerate's simple launcher, XTuner and ms-swift on one device): world size 1, and the
plan says that rank cannot be picked out (never silent)."""

from __future__ import annotations

from pathlib import Path

from test_launcher_modules import diags, env_of, numbers, plan


def test_accelerate_with_one_process_runs_its_simple_launcher() -> None:
    for command in ("accelerate launch --num_processes 1 train.py --lr 1",
                    "accelerate launch --num_processes=1 --num_machines 1 train.py"):
        p = plan(command)
        assert (p.launcher, numbers(p)) == ("accelerate", (1, 0, 1, 1))
        [said] = diags(p, "rank-in-child")
        assert said.severity == "info" and "simple launcher" in said.message
        assert "that child is rank 0" in said.message


def test_accelerate_one_process_under_a_multi_process_mode_has_its_rank() -> None:
    # --multi_gpu (or --use_deepspeed ...) runs torchrun even for one process: RANK is set.
    for command in ("accelerate launch --multi_gpu --num_processes 1 train.py",
                    "accelerate launch --use_deepspeed --num_processes 1 train.py",
                    "accelerate launch --num_processes 2 train.py"):
        assert not diags(plan(command), "rank-in-child"), command


def test_accelerate_config_of_one_process(tmp_path: Path) -> None:
    (tmp_path / "one.yaml").write_text("distributed_type: 'NO'\nnum_processes: 1\n")
    p = plan("accelerate launch --config_file one.yaml train.py", cwd=tmp_path)
    assert numbers(p) == (1, 0, 1, 1) and diags(p, "rank-in-child")
    (tmp_path / "multi.yaml").write_text("distributed_type: MULTI_GPU\nnum_processes: 1\n"
                                         "num_machines: 1\n")
    p = plan("accelerate launch --config_file multi.yaml train.py", cwd=tmp_path)
    assert not diags(p, "rank-in-child")


def test_xtuner_and_swift_on_one_device_say_it_too() -> None:
    for command in ("xtuner train cfg.py", "swift sft --model m"):
        p = plan(command, env_of())
        assert numbers(p) == (1, 0, 1, 1) and diags(p, "rank-in-child"), command

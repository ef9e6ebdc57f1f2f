"""DeepSpeed JSON configs: batch sizes kept consistent, written as a copy."""

from __future__ import annotations

import json
from pathlib import Path

from smoke_helpers import changed, digest, of_command, write

# deepspeedai/DeepSpeedExamples training/cifar/ds_config.json @ 127c7a10983c09be471d51686bc29
CIFAR_DS_CONFIG = """
{
  "train_batch_size": 16,
  "steps_per_print": 2000,
  "optimizer": {
    "type": "Adam",
    "params": {"lr": 0.001, "betas": [0.8, 0.999], "eps": 1e-8, "weight_decay": 3e-7}
  },
  "scheduler": {
    "type": "WarmupLR",
    "params": {"warmup_min_lr": 0, "warmup_max_lr": 0.001, "warmup_num_steps": 1000}
  },
  "gradient_clipping": 1.0,
  "prescale_gradients": false,
  "fp16": {
      "enabled": true,
      "fp16_master_weights_and_grads": false,
      "loss_scale": 0,
      "loss_scale_window": 500,
      "hysteresis": 2,
      "min_loss_scale": 1,
      "initial_scale_power": 15
  },
  "wall_clock_breakdown": false,
  "zero_optimization": {
      "stage": 0,
      "allgather_partitions": true,
      "reduce_scatter": true,
      "allgather_bucket_size": 50000000,
      "reduce_bucket_size": 50000000,
      "overlap_comm": true,
      "contiguous_gradients": true,
      "cpu_offload": false
  }
}
"""
# The cifar example's run_ds.sh (@ 924146c05808944a28850752e5f286364e33190a) passes --deepspeed
# and its own arguments; the JSON is named with --deepspeed_config (DeepSpeed's flag).
CIFAR = "deepspeed --num_gpus 8 cifar10_deepspeed.py --deepspeed --deepspeed_config ds_config.json"


def test_the_cifar_config_gets_a_consistent_copy(tmp_path: Path) -> None:
    write(tmp_path / "ds_config.json", CIFAR_DS_CONFIG)
    write(tmp_path / "cifar10_deepspeed.py", "import deepspeed\n")
    before = digest(tmp_path)
    result = of_command(CIFAR, tmp_path)
    assert "deepspeed_json" in result.frameworks
    [copy] = result.files
    assert result.argv[result.argv.index("--deepspeed_config") + 1] == copy
    assert "--deepspeed" in result.argv  # the bare flag stays
    total = changed(result, "train_batch_size")
    assert (total.old, total.new) == ("16", "2")  # 1 x 1 x 2 ranks
    assert total.where == "ds_config.json: train_batch_size"
    data = json.loads(Path(copy).read_text())
    assert data["train_batch_size"] == 2
    assert data["fp16"]["enabled"] is True  # everything else as it was
    assert data["optimizer"] == json.loads(CIFAR_DS_CONFIG)["optimizer"]
    assert changed(result, "--num_gpus").new == "2"
    assert digest(tmp_path) == before
    # A plain DeepSpeed script has its own loop: its length is not known, and it is said so.
    assert any("no step limit found" in m for m in result.missing)


def test_micro_accumulation_and_total_move_together(tmp_path: Path) -> None:
    write(tmp_path / "ds.json", json.dumps({
        "train_batch_size": 1024, "train_micro_batch_size_per_gpu": 16,
        "gradient_accumulation_steps": 8, "wandb": {"enabled": True, "project": "x"}}))
    result = of_command("deepspeed --num_gpus 8 train.py --deepspeed_config=ds.json", tmp_path)
    [copy] = result.files
    assert f"--deepspeed_config={copy}" in result.argv
    data = json.loads(Path(copy).read_text())
    assert (data["train_micro_batch_size_per_gpu"], data["gradient_accumulation_steps"],
            data["train_batch_size"]) == (1, 1, 2)
    assert data["wandb"] == {"enabled": False, "project": "x"}


def test_auto_values_need_no_copy(tmp_path: Path) -> None:
    write(tmp_path / "ds.json", json.dumps({"train_batch_size": "auto",
                                            "train_micro_batch_size_per_gpu": "auto"}))
    write(tmp_path / "train.py", "from transformers import TrainingArguments\n")
    result = of_command("deepspeed --num_gpus 4 train.py --deepspeed ds.json --output_dir o",
                        tmp_path)
    assert result.frameworks == ["hf_trainer", "deepspeed_json"]
    assert result.files == []
    assert "ds.json" in result.argv


def test_accelerate_names_the_config_with_its_own_flag(tmp_path: Path) -> None:
    write(tmp_path / "ds.json", json.dumps({"train_micro_batch_size_per_gpu": 8,
                                            "gradient_accumulation_steps": 4}))
    result = of_command("accelerate launch --use_deepspeed --deepspeed_config_file ds.json "
                        "--num_processes 8 train.py", tmp_path)
    [copy] = result.files
    assert result.argv[result.argv.index("--deepspeed_config_file") + 1] == copy


def test_an_unreadable_config_is_reported(tmp_path: Path) -> None:
    result = of_command("deepspeed --num_gpus 2 train.py --deepspeed_config nowhere.json",
                        tmp_path)
    assert any("nowhere.json cannot be read" in m for m in result.missing)
    assert "nowhere.json" in result.argv and result.files == []


def test_without_num_gpus_the_smoke_run_pins_two(tmp_path: Path) -> None:
    write(tmp_path / "ds.json", CIFAR_DS_CONFIG)
    result = of_command("deepspeed train.py --deepspeed --deepspeed_config ds.json", tmp_path)
    assert result.argv[:3] == ["deepspeed", "--num_gpus", "2"]
    assert changed(result, "--num_gpus").old is None
    assert changed(result, "train_batch_size").new == "2"

"""LLaMA-Factory: knobs in the YAML, changed by ``key=value`` overrides (never in the file)."""

from __future__ import annotations

from pathlib import Path

from smoke_helpers import changed, digest, of_command, unchanged, write

# hiyouga/LLaMA-Factory examples/train_lora/llama3_lora_sft.yaml @ e8e6af26514272e29a50649b3
LLAMA3_LORA_SFT = """
### model
model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct

### method
stage: sft
do_train: true
finetuning_type: lora
lora_target: all

### dataset
dataset: identity,alpaca_en_demo
template: llama3
cutoff_len: 1024
max_samples: 1000
overwrite_cache: true
preprocessing_num_workers: 16

### output
output_dir: saves/llama3-8b/lora/sft
logging_steps: 10
save_steps: 500
plot_loss: true
overwrite_output_dir: true

### train
per_device_train_batch_size: 1
gradient_accumulation_steps: 8
learning_rate: 1.0e-4
num_train_epochs: 3.0
lr_scheduler_type: cosine
warmup_ratio: 0.1
bf16: true
ddp_timeout: 180000000

### eval
val_size: 0.1
per_device_eval_batch_size: 1
eval_strategy: steps
eval_steps: 500
"""

# hiyouga/LLaMA-Factory examples/train_lora/llama3_lora_sft_ds3.yaml @ 1c66486723719c65c47bb
LLAMA3_LORA_SFT_DS3 = """
### model
model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct
trust_remote_code: true

### method
stage: sft
do_train: true
finetuning_type: lora
lora_rank: 8
lora_target: all
deepspeed: examples/deepspeed/ds_z3_config.json  # choices: [ds_z0_config.json, ...]

### dataset
dataset: identity,alpaca_en_demo
template: llama3
cutoff_len: 2048
max_samples: 1000
overwrite_cache: true
preprocessing_num_workers: 16
dataloader_num_workers: 4

### output
output_dir: saves/llama3-8b/lora/sft
logging_steps: 10
save_steps: 500
plot_loss: true
overwrite_output_dir: true
save_only_model: false

### train
per_device_train_batch_size: 1
gradient_accumulation_steps: 2
learning_rate: 1.0e-4
num_train_epochs: 3.0
lr_scheduler_type: cosine
warmup_ratio: 0.1
bf16: true
ddp_timeout: 180000000
resume_from_checkpoint: null

### eval
# eval_dataset: alpaca_en_demo
# val_size: 0.1
# per_device_eval_batch_size: 1
# eval_strategy: steps
# eval_steps: 500
"""

# hiyouga/LLaMA-Factory examples/deepspeed/ds_z3_config.json @ 1d6e8b218240c154638f9bdcb (head)
DS_Z3 = """
{
  "train_batch_size": "auto",
  "train_micro_batch_size_per_gpu": "auto",
  "gradient_accumulation_steps": "auto",
  "gradient_clipping": "auto",
  "zero_allow_untested_optimizer": true,
  "bf16": {"enabled": "auto"},
  "zero_optimization": {"stage": 3, "overlap_comm": false, "contiguous_gradients": true}
}
"""

YAML = "examples/train_lora/llama3_lora_sft.yaml"


def test_the_yaml_knobs_become_overrides_and_the_yaml_is_untouched(tmp_path: Path) -> None:
    write(tmp_path / YAML, LLAMA3_LORA_SFT)
    before = digest(tmp_path)
    result = of_command(f"llamafactory-cli train {YAML}", tmp_path)
    assert result.frameworks == ["llamafactory"]
    assert result.argv[:3] == ["llamafactory-cli", "train", YAML]
    overrides = dict(w.split("=", 1) for w in result.argv[3:])
    assert overrides["max_steps"] == "3"
    assert overrides["gradient_accumulation_steps"] == "1"
    assert overrides["cutoff_len"] == "128"
    assert overrides["eval_strategy"] == "no" and overrides["val_size"] == "0"
    assert overrides["save_strategy"] == "no" and overrides["report_to"] == "none"
    assert overrides["preprocessing_num_workers"] == "1"
    steps = changed(result, "max_steps")
    assert steps.old is None and "num_train_epochs 3.0" in steps.why
    assert steps.where == "max_steps= (command line)"
    accumulation = changed(result, "gradient_accumulation_steps")
    assert (accumulation.old, accumulation.new) == ("8", "1")
    assert accumulation.where == f"{YAML}: gradient_accumulation_steps"
    assert (changed(result, "max_samples").old, changed(result, "max_samples").new) == ("1000",
                                                                                        "8")
    output = changed(result, "output_dir")
    assert output.old == "saves/llama3-8b/lora/sft" and "rankdebug-smoke" in str(output.new)
    # Already the smallest batch: no override at all.
    unchanged(result, "per_device_train_batch_size")
    assert not any(w.startswith("per_device_train_batch_size=") for w in result.argv)
    assert result.files == []
    assert digest(tmp_path) == before


def test_an_override_on_the_command_line_is_changed_where_it_is(tmp_path: Path) -> None:
    write(tmp_path / YAML, LLAMA3_LORA_SFT)
    result = of_command(f"llamafactory-cli train {YAML} max_steps=5000 learning_rate=1e-5",
                        tmp_path)
    assert result.argv[3:5] == ["max_steps=3", "learning_rate=1e-5"]
    assert [w for w in result.argv if w.startswith("max_steps=")] == ["max_steps=3"]
    assert changed(result, "max_steps").old == "5000"


def test_launch_variables_shrink_to_two_ranks_on_one_node(tmp_path: Path) -> None:
    write(tmp_path / YAML, LLAMA3_LORA_SFT)
    result = of_command(f"FORCE_TORCHRUN=1 NNODES=2 NODE_RANK=1 NPROC_PER_NODE=8 "
                        f"llamafactory-cli train {YAML}", tmp_path)
    assert result.env == {"FORCE_TORCHRUN": "1", "NNODES": "1", "NODE_RANK": "0",
                          "NPROC_PER_NODE": "2"}
    assert changed(result, "NPROC_PER_NODE").where == "environment"


def test_a_deepspeed_config_of_autos_needs_no_copy(tmp_path: Path) -> None:
    yaml = "examples/train_lora/llama3_lora_sft_ds3.yaml"
    write(tmp_path / yaml, LLAMA3_LORA_SFT_DS3)
    write(tmp_path / "examples/deepspeed/ds_z3_config.json", DS_Z3)
    result = of_command(f"FORCE_TORCHRUN=1 llamafactory-cli train {yaml}", tmp_path)
    assert result.files == []  # every batch size is "auto": the Trainer fills them in
    workers = changed(result, "dataloader_num_workers")
    assert (workers.old, workers.new) == ("4", "0")
    assert changed(result, "cutoff_len").old == "2048"
    assert any(i.value == "examples/deepspeed/ds_z3_config.json" for i in result.inputs)


def test_a_deepspeed_config_with_numbers_gets_a_copy_named_by_an_override(
        tmp_path: Path) -> None:
    write(tmp_path / YAML, LLAMA3_LORA_SFT + "deepspeed: ds.json\n")
    write(tmp_path / "ds.json", '{"train_micro_batch_size_per_gpu": 4, '
                                '"gradient_accumulation_steps": 8, "train_batch_size": 256}')
    result = of_command(f"NPROC_PER_NODE=8 FORCE_TORCHRUN=1 llamafactory-cli train {YAML}",
                        tmp_path)
    [copy] = result.files
    assert f"deepspeed={copy}" in result.argv
    assert changed(result, "train_batch_size").new == "2"  # 1 x 1 x 2 ranks


def test_flags_instead_of_a_yaml(tmp_path: Path) -> None:
    result = of_command("llamafactory-cli train --stage sft --do_train --model_name_or_path "
                        "Qwen/Qwen2-0.5B --dataset alpaca_en_demo --output_dir out "
                        "--num_train_epochs 3 --per_device_train_batch_size 4", tmp_path)
    assert changed(result, "--per_device_train_batch_size").new == "1"
    assert "--max_steps" in result.argv and "--cutoff_len" in result.argv


def test_an_unreadable_yaml_is_reported_not_guessed(tmp_path: Path) -> None:
    result = of_command("llamafactory-cli train missing.yaml", tmp_path)
    assert any("missing.yaml cannot be read" in m for m in result.missing)
    assert "max_steps=3" in result.argv

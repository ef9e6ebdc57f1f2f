"""torchtitan: TOML knobs in a copy, command-line knobs where they are."""

from __future__ import annotations

from pathlib import Path

import tomllib
from smoke_helpers import changed, digest, of_command, of_file, unchanged, write

# pytorch/torchtitan torchtitan/models/llama3/train_configs/llama3_8b.toml @ f3534d77b3876a3c
LLAMA3_8B = """
# torchtitan Config.toml
# NOTE: this toml config is a preset for 64 A100 GPUs.

[job]
dump_folder = "./outputs"
description = "Llama 3 8B training"

[profiling]
enable_profiling = true
save_traces_folder = "profile_trace"
profile_freq = 100

[metrics]
log_freq = 10
enable_tensorboard = true
save_tb_folder = "tb"

[model]
name = "llama3"
flavor = "8B"
tokenizer_path = "./assets/tokenizer/original/tokenizer.model"
# converters = ["float8"]

[optimizer]
name = "AdamW"
lr = 3e-4
eps = 1e-8

[lr_scheduler]
warmup_steps = 200  # lr scheduler warm up

[training]
batch_size = 1
seq_len = 8192
max_norm = 1.0  # grad norm clipping
steps = 1000
compile = false
dataset = "c4"

[parallelism]
data_parallel_replicate_degree = 1
data_parallel_shard_degree = -1
tensor_parallel_degree = 1
pipeline_parallel_degree = 1
context_parallel_degree = 1

[checkpoint]
enable_checkpoint = false
folder = "checkpoint"
interval = 500
model_weights_only = false
export_dtype = "float32"
async_mode = "disabled" # ["disabled", "async", "async_with_pinned_mem"]

[activation_checkpoint]
mode = "selective"  # ["none", "selective", "full"]
selective_ac_option = "op"  # "int" = ac every positive int layer or 'op', ac based on ops policy
"""

# pytorch/torchtitan run_train.sh @ 47f63f4ba5d38e6095eec3b74a9eba916255c73b
RUN_TRAIN = """
#!/usr/bin/bash
set -ex

# use envs as local overrides for convenience
# e.g.
# LOG_RANK=0,1 NGPU=4 ./run_train.sh
NGPU=${NGPU:-"8"}
export LOG_RANK=${LOG_RANK:-0}
CONFIG_FILE=${CONFIG_FILE:-"./torchtitan/models/llama3/train_configs/debug_model.toml"}

overrides=""
if [ $# -ne 0 ]; then
    overrides="$*"
fi

TORCHFT_LIGHTHOUSE=${TORCHFT_LIGHTHOUSE:-"http://localhost:29510"}

PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True" \\
TORCHFT_LIGHTHOUSE=${TORCHFT_LIGHTHOUSE} \\
torchrun --nproc_per_node=${NGPU} --rdzv_backend c10d --rdzv_endpoint="localhost:0" \\
--local-ranks-filter ${LOG_RANK} --role rank --tee 3 \\
-m torchtitan.train --job.config_file ${CONFIG_FILE} $overrides
"""
TOML = "torchtitan/models/llama3/train_configs/llama3_8b.toml"


def test_the_8b_preset_gets_a_toml_copy(tmp_path: Path) -> None:
    write(tmp_path / TOML, LLAMA3_8B)
    script = write(tmp_path / "run_train.sh",
                   RUN_TRAIN.replace("debug_model.toml", "llama3_8b.toml"))
    before = digest(tmp_path)
    line = RUN_TRAIN.lstrip("\n").splitlines().index(
        'torchrun --nproc_per_node=${NGPU} --rdzv_backend c10d --rdzv_endpoint="localhost:0" \\'
    ) + 1
    result = of_file(script, line, tmp_path)
    assert result.frameworks == ["torchtitan"]
    assert "--nproc_per_node=2" in result.argv
    [copy] = result.files
    assert result.argv[result.argv.index("--job.config_file") + 1] == copy
    data = tomllib.loads(Path(copy).read_text())
    assert data["training"]["steps"] == 3 and data["training"]["seq_len"] == 128
    assert data["lr_scheduler"]["warmup_steps"] == 2
    assert data["profiling"]["enable_profiling"] is False
    assert data["metrics"]["enable_tensorboard"] is False
    assert data["optimizer"] == tomllib.loads(LLAMA3_8B)["optimizer"]
    steps = changed(result, "training.steps")
    assert (steps.old, steps.new, steps.where) == ("1000", "3", f"./{TOML}: training.steps")
    unchanged(result, "training.batch_size")  # 1 already
    assert result.env["PYTORCH_CUDA_ALLOC_CONF"] == "expandable_segments:True"
    assert digest(tmp_path) == before


def test_a_command_line_override_wins_and_is_changed_there(tmp_path: Path) -> None:
    write(tmp_path / TOML, LLAMA3_8B)
    result = of_command(f"torchrun --nproc_per_node=8 -m torchtitan.train --job.config_file "
                        f"{TOML} --training.steps 50 --training.batch_size=4", tmp_path)
    assert result.argv[-3:] == ["--training.steps", "3", "--training.batch_size=1"]
    assert changed(result, "--training.steps").where == "--training.steps"
    data = tomllib.loads(Path(result.files[0]).read_text())
    assert data["training"]["steps"] == 1000  # the command line wins; the copy keeps it


def test_the_python_config_form_reports_what_it_cannot_see(tmp_path: Path) -> None:
    # pytorch/torchtitan run_train.sh @ 0168bd518f831380828e7a59266fbbb7fca3a851
    result = of_command("torchrun --nproc_per_node=8 --rdzv_backend c10d "
                        "--rdzv_endpoint=localhost:0 -m torchtitan.train --module llama3 "
                        "--config llama3_debugmodel", tmp_path)
    assert result.argv[-2:] == ["--training.steps", "3"]
    assert any("no batch size found" in m for m in result.missing)
    assert any("no sequence length found" in m for m in result.missing)
    assert result.files == []

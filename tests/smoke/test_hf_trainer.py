"""Hugging Face Trainer scripts: TrainingArguments flags, the data fields a script defines,
and a script's single JSON/YAML argument file (written as a copy)."""

from __future__ import annotations

import json
from pathlib import Path

from smoke_helpers import changed, digest, of_command, unchanged, write

# The parts of transformers' examples/pytorch/language-modeling/run_clm.py (@ 00d481d18f914b)
# the rewrite reads: HfArgumentParser over dataclasses that define max_train_samples and
# block_size, and a lone .json argument parsed with parse_json_file. Written anew, not copied.
RUN_CLM_SHAPE = '''
from dataclasses import dataclass, field
from typing import Optional

from transformers import HfArgumentParser, TrainingArguments


@dataclass
class DataTrainingArguments:
    dataset_name: Optional[str] = field(default=None)
    max_train_samples: Optional[int] = field(default=None)
    block_size: Optional[int] = field(default=None)


def main():
    parser = HfArgumentParser((DataTrainingArguments, TrainingArguments))
    if len(sys.argv) == 2 and sys.argv[1].endswith(".json"):
        data_args, training_args = parser.parse_json_file(json_file=sys.argv[1])
'''

# transformers examples/pytorch/language-modeling/README.md, "GPT-2/GPT and causal language
# modeling": the run_clm.py command.
RUN_CLM = ("python run_clm.py --model_name_or_path openai-community/gpt2 --dataset_name "
           "wikitext --dataset_config_name wikitext-2-raw-v1 --per_device_train_batch_size 8 "
           "--per_device_eval_batch_size 8 --do_train --do_eval --output_dir /tmp/test-clm")


def test_run_clm_command(tmp_path: Path) -> None:
    write(tmp_path / "run_clm.py", RUN_CLM_SHAPE)
    result = of_command(RUN_CLM, tmp_path)
    assert result.frameworks == ["hf_trainer"]
    steps = changed(result, "--max_steps")
    assert (steps.old, steps.new, steps.where) == (None, "3", "--max_steps")
    batch = changed(result, "--per_device_train_batch_size")
    assert (batch.old, batch.new) == ("8", "1")
    do_eval = changed(result, "--do_eval")
    assert (do_eval.old, do_eval.new) == ("(set)", None)
    assert "--do_eval" not in result.argv and "--do_train" in result.argv
    assert changed(result, "--save_strategy").new == "no"
    assert changed(result, "--report_to").new == "none"
    assert changed(result, "--max_train_samples").new == "8"  # the script defines it
    assert changed(result, "--block_size").new == "128"
    out = changed(result, "--output_dir")
    assert out.old == "/tmp/test-clm" and out.new is not None and "rankdebug-smoke" in out.new
    hub = {i.value for i in result.inputs if i.hub}
    assert {"openai-community/gpt2", "wikitext"} <= hub
    assert result.missing == []


def test_knobs_the_script_does_not_define_are_reported_missing(tmp_path: Path) -> None:
    write(tmp_path / "train.py", """
        from transformers import HfArgumentParser, TrainingArguments, Trainer
        [args] = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()
    """)
    result = of_command("python train.py --output_dir out --num_train_epochs 3", tmp_path)
    assert "num_train_epochs 3 no longer decides" in changed(result, "--max_steps").why
    assert any("no data-set slice" in m for m in result.missing)
    assert any("no sequence-length knob" in m for m in result.missing)
    assert "--max_train_samples" not in result.argv and "--block_size" not in result.argv


def test_dashed_spellings_and_joined_values_keep_their_form(tmp_path: Path) -> None:
    write(tmp_path / "run_clm.py", RUN_CLM_SHAPE)
    result = of_command("python run_clm.py --per-device-train-batch-size=16 --max_steps 100 "
                        "--block_size 64 --output_dir out", tmp_path)
    assert "--per-device-train-batch-size=1" in result.argv
    assert result.argv[result.argv.index("--max_steps") + 1] == "3"
    unchanged(result, "--block_size")  # 64 is already short


def test_a_json_argument_file_becomes_a_copy(tmp_path: Path) -> None:
    write(tmp_path / "run_clm.py", RUN_CLM_SHAPE)
    write(tmp_path / "args.json", json.dumps({
        "dataset_name": "wikitext", "output_dir": "/tmp/test-clm", "do_train": True,
        "do_eval": True, "num_train_epochs": 3, "per_device_train_batch_size": 8,
        "eval_strategy": "steps", "report_to": "wandb"}))
    before = digest(tmp_path)
    result = of_command("python run_clm.py args.json", tmp_path)
    [copy] = result.files
    assert result.argv == ["python", "run_clm.py", copy]
    data = json.loads(Path(copy).read_text())
    assert data["max_steps"] == 3 and data["per_device_train_batch_size"] == 1
    assert data["do_eval"] is False and data["eval_strategy"] == "no"
    assert data["report_to"] == "none" and data["save_strategy"] == "no"
    assert changed(result, "per_device_train_batch_size").where == "args.json: " \
                                                                   "per_device_train_batch_size"
    assert digest(tmp_path) == before


def test_accelerate_launch_shrinks_the_process_count(tmp_path: Path) -> None:
    write(tmp_path / "run_clm.py", RUN_CLM_SHAPE)
    result = of_command("accelerate launch --multi_gpu --num_processes 8 --num_machines 1 "
                        f"{RUN_CLM.removeprefix('python ')}", tmp_path)
    assert result.argv[:6] == ["accelerate", "launch", "--multi_gpu", "--num_processes", "2",
                               "--num_machines"]
    assert changed(result, "--num_processes").where == "accelerate --num_processes"
    assert result.plan["to"] == {"nnodes": 1, "nproc_per_node": 2, "world_size": 2}

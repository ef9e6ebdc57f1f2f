"""Staged checks: each stage passes or fails with its reason, and the first failure ends the
run. Real files, a real interpreter subprocess for the imports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from smoke_helpers import ENV, EXAMPLES, cli, write

from rankdebug.command import plan_argv
from rankdebug.smoke import checks, smoke
from rankdebug.smoke.devices import machine_gpus

NANOGPT = EXAMPLES / "nanogpt"
NANOGPT_RUN = "torchrun --standalone --nproc_per_node 8 train.py config/char.py"


def stages(command: str, cwd: Path) -> list[checks.Stage]:
    plan = plan_argv([command], caller_env=ENV, cwd=cwd, env_complete=False)
    return list(checks.run(plan, smoke(plan, cwd=cwd), cwd))


def test_a_cpu_gloo_command_passes_every_stage() -> None:
    if machine_gpus():
        pytest.skip("this machine has GPUs: the CPU case is not the one to check")
    result = stages(NANOGPT_RUN, NANOGPT)
    assert [(s.name, s.ok) for s in result] == [
        ("entry", True), ("imports", True), ("paths", True), ("launcher", True),
        ("framework", True), ("devices", True)]
    assert "torch" in result[1].reason and "config/char.py" in result[2].reason
    assert result[3].reason.startswith("torchrun (torch ")
    assert "run on the CPU (gloo)" in result[5].reason


def test_a_missing_script_fails_first(tmp_path: Path) -> None:
    [stage] = stages("torchrun --nproc_per_node 2 train.py", tmp_path)
    assert (stage.name, stage.ok) == ("entry", False)
    assert stage.reason == f"train.py does not exist in {tmp_path}"


def test_a_script_that_does_not_compile(tmp_path: Path) -> None:
    write(tmp_path / "train.py", "import torch\ndef broken(:\n    pass\n")
    [stage] = stages("python train.py", tmp_path)
    assert not stage.ok and "line 2" in stage.reason


def test_a_missing_import_is_named_with_its_line(tmp_path: Path) -> None:
    # Imports inside try blocks (optional ones) are not required; top-level ones are.
    write(tmp_path / "train.py", "import os\ntry:\n    import wandb\nexcept ImportError:\n"
                                 "    wandb = None\nimport torch\nfrom model import GPT\n")
    result = stages("python train.py", tmp_path)
    assert [(s.name, s.ok) for s in result] == [("entry", True), ("imports", False)]
    assert result[1].reason.endswith("model (line 7)")
    write(tmp_path / "model.py", "GPT = object\n")  # beside the script: on its sys.path
    assert all(s.ok for s in stages("python train.py", tmp_path)[:2])


def test_a_missing_module_entry(tmp_path: Path) -> None:
    [stage] = stages("python3 -m verl.trainer.main_ppo data.train_batch_size=8", tmp_path)
    assert (stage.name, stage.ok) == ("entry", False)
    assert stage.reason == "no module named 'verl' (for -m verl.trainer.main_ppo)"


def test_a_module_entry_is_found_without_running_it(tmp_path: Path) -> None:
    write(tmp_path / "pkg/__init__.py", "raise SystemExit('package code must not run')\n")
    write(tmp_path / "pkg/train.py", "import torch\n")
    result = stages("torchrun --nproc_per_node 2 -m pkg.train", tmp_path)
    assert result[0].ok and result[0].reason.endswith(str(tmp_path / "pkg/train.py") + ")")
    assert result[1].ok


def test_a_missing_data_path(tmp_path: Path) -> None:
    write(tmp_path / "train.py", "from transformers import HfArgumentParser\n")
    result = stages("python train.py --train_file data/train.json --output_dir out", tmp_path)
    assert (result[-1].name, result[-1].ok) == ("paths", False)
    assert result[-1].reason == (f"data data/train.json (--train_file) does not exist in "
                                 f"{tmp_path}")


def test_a_hub_id_is_reported_never_downloaded(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "train.py", "from transformers import HfArgumentParser\n")
    command = "python train.py --model_name_or_path Qwen/Qwen2-7B --output_dir out"
    paths = stages(command, tmp_path)[2]
    assert paths.ok
    assert "Qwen/Qwen2-7B (--model_name_or_path) is a hub id, not in the local cache" \
           in paths.reason
    (tmp_path / "hub/models--Qwen--Qwen2-7B").mkdir(parents=True)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    assert "is a hub id, in the local cache" in stages(command, tmp_path)[2].reason


def test_more_processes_than_devices(tmp_path: Path) -> None:
    result = stages(f"CUDA_VISIBLE_DEVICES=0 {NANOGPT_RUN}", NANOGPT)
    assert (result[-1].name, result[-1].ok) == ("devices", False)
    assert result[-1].reason == ("2 processes per node, but CUDA_VISIBLE_DEVICES=0 makes 1 "
                                 "device(s) visible")


def test_a_missing_launcher(tmp_path: Path) -> None:
    write(tmp_path / "train.py", "import torch\n")
    result = stages("colossalai run --nproc_per_node 2 train.py", tmp_path)
    assert (result[-1].name, result[-1].ok) == ("launcher", False)
    assert result[-1].reason == "colossalai is not on PATH"


def test_a_missing_framework(tmp_path: Path) -> None:
    write(tmp_path / "main.py", "import torch\n")  # builds its CLI lazily: imports resolve
    result = stages("python main.py fit --trainer.max_epochs 3", tmp_path)
    assert (result[-1].name, result[-1].ok) == ("framework", False)
    assert result[-1].reason.startswith("lightning (for lightning): cannot be imported")


def test_cli_prints_stages_and_exits_1_at_the_first_failure(tmp_path: Path) -> None:
    done = cli("smoke", "--check", "--json", "--", "torchrun", "--nproc_per_node", "2",
               "train.py", cwd=tmp_path)
    assert done.returncode == 1
    assert [json.loads(line) for line in done.stdout.splitlines()] == [
        {"stage": "entry", "ok": False, "reason": f"train.py does not exist in {tmp_path}"}]
    human = cli("smoke", "--check", "--cwd", str(NANOGPT), "--", *NANOGPT_RUN.split())
    assert human.returncode == (0 if not machine_gpus() else human.returncode)
    assert human.stdout.splitlines()[0].startswith("pass  entry     train.py is there")

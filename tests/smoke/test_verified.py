"""A smoke knob is reported as applied only where it reaches the job: a flag the script's
parser reads, or a value the run-time hook sets (TrainingArguments built in code) and a
step limit it holds; else "not applied". Real jobs run here (torchrun, 2 ranks on gloo),
their optimizer steps counted from what they print, and nothing lands beside the script."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from smoke_helpers import cli, digest, of_command, write

from rankdebug.smoke import reads

JOBS = Path(__file__).resolve().parent / "jobs"
# A bound, not a timing: each run takes 5-10 s on a quiet machine.
LIMIT_S = 300


def _smoke(folder: Path, *words: str) -> dict[str, Any]:
    """``rankdebug smoke --json`` of ``words`` (options, then ``--`` and the command)."""
    done = cli("smoke", "--json", "--cwd", str(folder), *words)
    assert done.returncode == 0, done.stdout + done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def _run(folder: Path, argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` in ``folder``; it must end with 0 and leave the folder as it was."""
    before = digest(folder)
    ran = subprocess.run(argv, cwd=folder, env={**os.environ, **env, "OMP_NUM_THREADS": "1"},
                         capture_output=True, text=True, timeout=LIMIT_S, check=False)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    after = {k: v for k, v in digest(folder).items() if "__pycache__" not in k}
    assert after == before, "written beside the script"
    return ran


def _job(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    shutil.copytree(JOBS / name, folder)
    return folder


def _steps(out: str, prefix: str) -> list[str]:
    """The lines that start with ``prefix``, up to their first colon (``iter 2``)."""
    return [line.partition(":")[0] for line in out.splitlines() if line.startswith(prefix)]


# --- a Trainer that builds its TrainingArguments in code -------------------------------


def test_trainer_arguments_built_in_code_are_set_at_run_time(tmp_path: Path) -> None:
    folder = _job(tmp_path, "trainer")
    answer = _smoke(folder, "--", "torchrun", "--standalone", "--nproc_per_node", "4",
                    "in_code.py")
    # No flag: the script reads none (appending --max_steps 3 once changed nothing).
    assert answer["argv"] == ["torchrun", "--standalone", "--nproc_per_node", "2", "in_code.py"]
    by_name = {c["name"]: c for c in answer["changes"]}
    line = next(n for n, text in enumerate((folder / "in_code.py").read_text().splitlines(), 1)
                if "TrainingArguments(output_dir" in text)
    assert by_name["max_steps"]["where"] == f"TrainingArguments(...) at in_code.py:{line}, " \
                                            "set at run time"
    assert (by_name["per_device_train_batch_size"]["from"],
            by_name["per_device_train_batch_size"]["to"]) == ("2", "1")
    assert by_name["output_dir"]["from"] == "out"
    assert "the script builds its arguments in code" in by_name["RANKDEBUG_SMOKE_STEPS"]["why"]
    values = json.loads(answer["env"]["RANKDEBUG_SMOKE_TRAINING_ARGS"])
    assert values["max_steps"] == 3 and values["save_strategy"] == "no"
    assert values["output_dir"] == by_name["output_dir"]["to"]
    output = Path(values["output_dir"])
    ran = _run(folder, answer["argv"], answer["env"])
    # The full run makes 20 x 16 steps and saves every 5: three steps, nothing saved there.
    assert _steps(ran.stdout, "optimizer step") == [f"optimizer step {n}" for n in (1, 2, 3)]
    assert "TrainingArguments set at run time (the script builds it in code): max_steps=3" in \
           ran.stderr
    assert (output / "config.json").is_file()  # trainer.save_model(), in the smoke folder
    assert not list(output.glob("checkpoint-*"))


def test_trainer_with_hf_argument_parser_gets_flags(tmp_path: Path) -> None:
    folder = _job(tmp_path, "trainer")
    answer = _smoke(folder, "--", "torchrun", "--standalone", "--nproc_per_node", "2",
                    "hf_parser.py", "--output_dir", "out", "--num_train_epochs", "20",
                    "--save_steps", "5", "--use_cpu")  # DDP on gloo (else each rank alone)
    argv = answer["argv"]
    assert argv[argv.index("--max_steps") + 1] == "3"
    assert argv[argv.index("--max_train_samples") + 1] == "8"  # a field the parser reads
    output = Path(argv[argv.index("--output_dir") + 1])
    assert answer["hook"] is None and "RANKDEBUG_SMOKE_STEPS" not in answer["env"]
    assert answer["not_applied"] == []
    ran = _run(folder, argv, answer["env"])
    assert _steps(ran.stdout, "optimizer step") == [f"optimizer step {n}" for n in (1, 2, 3)]
    assert (output / "config.json").is_file()


def test_data_knobs_no_parser_reads_are_not_applied(tmp_path: Path) -> None:
    write(tmp_path / "train.py", """
        from dataclasses import dataclass
        from transformers import Trainer, TrainingArguments

        @dataclass
        class DataArguments:
            block_size: int = 1024
            max_train_samples: int | None = None

        data = DataArguments()
        args = TrainingArguments(output_dir="out", max_steps=1000)
    """)
    result = of_command("python train.py", tmp_path)
    assert "--block_size" not in result.argv and "--max_train_samples" not in result.argv
    assert result.not_applied == [
        ("max_train_samples", "not applied: the script builds its arguments in code"),
        ("block_size", "not applied: the script builds its arguments in code")]
    assert "not applied: the script builds its arguments in code: max_train_samples, " \
           "block_size" in result.missing
    assert all(c.name not in ("block_size", "max_train_samples") for c in result.changes)
    steps = next(c for c in result.changes if c.name == "max_steps")
    assert (steps.old, steps.new) == ("1000", "3")


def test_data_fields_parsed_beside_training_arguments_built_in_code(tmp_path: Path) -> None:
    # HfArgumentParser reads the data fields; TrainingArguments come from code.
    write(tmp_path / "train.py", """
        from dataclasses import dataclass
        from transformers import HfArgumentParser, Trainer, TrainingArguments

        @dataclass
        class DataArguments:
            block_size: int = 1024

        [data] = HfArgumentParser(DataArguments).parse_args_into_dataclasses()
        args = TrainingArguments(output_dir="out", num_train_epochs=3)
    """)
    result = of_command("python train.py --block_size 1024", tmp_path)
    assert result.argv == ["python", "train.py", "--block_size", "128"]
    assert {c.name for c in result.changes} >= {"--block_size", "max_steps", "output_dir",
                                                "RANKDEBUG_SMOKE_STEPS"}
    assert "--max_steps" not in result.argv


def test_what_a_script_reads_from_its_command_line() -> None:
    parsed = reads.read("from transformers import HfArgumentParser, TrainingArguments\n"
                        "class Mine(TrainingArguments):\n    lora_r: int = 8\n"
                        "p = HfArgumentParser((Mine,))\nargs, = p.parse_args_into_dataclasses()\n")
    assert parsed.training_parsed and parsed.accepts("lora_r") and not parsed.accepts("x")
    in_code = reads.read("import argparse\np = argparse.ArgumentParser()\n"
                         "p.add_argument('--lr')\nargs = p.parse_args(['--lr', '1'])\n")
    assert not in_code.argv and not in_code.accepts("lr")
    argparse_cli = reads.read("import argparse\np = argparse.ArgumentParser()\n"
                              "p.add_argument('--max-steps', type=int)\nargs = p.parse_args()\n")
    assert argparse_cli.argv and argparse_cli.accepts("max_steps")
    assert not argparse_cli.training_parsed
    assert reads.read("import fire\nfire.Fire(main)\n").unknown


# --- nanoGPT's loop, and its CUDA/NCCL defaults -----------------------------------------

NANOGPT_RUN = ("torchrun", "--standalone", "--nproc_per_node", "8", "train.py")


def test_nanogpt_defaults_fail_the_devices_check_and_offer_the_cpu(tmp_path: Path) -> None:
    folder = _job(tmp_path, "nanogpt_loop")
    # No GPU visible, whatever this machine has.
    done = cli("smoke", "--check", "--cwd", str(folder), "--", "CUDA_VISIBLE_DEVICES=",
               *NANOGPT_RUN)
    assert done.returncode == 1, done.stdout
    last = done.stdout.splitlines()[-1]
    assert last.startswith("FAIL  devices   the command expects GPUs (train.py: "
                           "backend = 'nccl' (line 26), device = 'cuda' (line 27)), but ")
    assert last.endswith("; on the CPU: `rankdebug smoke --cpu` sets --backend=gloo "
                         "--device=cpu")
    passed = cli("smoke", "--check", "--cpu", "--cwd", str(folder), "--", *NANOGPT_RUN)
    assert passed.returncode == 0, passed.stdout
    assert "run on the CPU (gloo)" in passed.stdout.splitlines()[-1]


def test_nanogpt_loop_is_held_to_the_smoke_steps(tmp_path: Path) -> None:
    folder = _job(tmp_path, "nanogpt_loop")
    answer = _smoke(folder, "--cpu", "--", *NANOGPT_RUN)
    assert "--max_iters=3" in answer["argv"] and answer["env"]["CUDA_VISIBLE_DEVICES"] == ""
    assert answer["argv"][-2:] == ["--backend=gloo", "--device=cpu"]
    assert answer["cpu_change"] == ["--backend=gloo", "--device=cpu"]
    assert answer["gpu_uses"] == []  # after --cpu: nothing left that asks for a GPU
    ran = _run(folder, answer["argv"], answer["env"])
    # nanoGPT's loop makes max_iters + 1 steps: the fourth is stopped before it is taken.
    assert _steps(ran.stdout, "iter ") == [f"iter {n}" for n in range(3)], ran.stdout
    assert "rankdebug smoke: 3 optimizer steps done: the smoke run ends the job here" in \
           ran.stderr


@pytest.mark.timeout(200)
def test_the_stop_holds_under_rankdebug_launch(tmp_path: Path) -> None:
    # The launch's own bootstrap runs first on PYTHONPATH and chains to the smoke hook.
    folder = _job(tmp_path, "nanogpt_loop")
    answer = _smoke(folder, "--cpu", "--", *NANOGPT_RUN)
    ran = _run(folder, [sys.executable, "-m", "rankdebug", "launch", "--ranks", "1",
                        "--no-wait", "--", *answer["argv"]], answer["env"])
    assert _steps(ran.stdout, "iter ") == [f"iter {n}" for n in range(3)], ran.stdout
    assert "3 optimizer steps done" in ran.stderr


# karpathy/nanoGPT train.py's DDP setup (written anew): the rank's device is CUDA in code.
NANOGPT_DDP = """
import os
from torch.distributed import init_process_group
backend = 'nccl' # 'nccl', 'gloo', etc.
device = 'cuda' # examples: 'cpu', 'cuda', 'cuda:0', 'cuda:1' etc., or try 'mps' on macbooks
max_iters = 600000
exec(open('configurator.py').read())
ddp = int(os.environ.get('RANK', -1)) != -1
if ddp:
    init_process_group(backend=backend)
    ddp_local_rank = int(os.environ['LOCAL_RANK'])
    device = f'cuda:{ddp_local_rank}'
    torch.cuda.set_device(device)
device_type = 'cuda' if 'cuda' in device else 'cpu'
"""


def test_cuda_picked_in_code_is_named_not_offered(tmp_path: Path) -> None:
    write(tmp_path / "train.py", NANOGPT_DDP)
    shutil.copy(JOBS / "nanogpt_loop" / "configurator.py", tmp_path)
    result = of_command("torchrun --nproc_per_node 8 train.py", tmp_path, cpu=True)
    assert [(u.what, u.knob) for u in result.gpu_uses] == [
        ("device = f'cuda:{ddp_local_rank}'", None), ("torch.cuda.set_device(device)", None)]
    done = cli("smoke", "--check", "--cwd", str(tmp_path), "--", "CUDA_VISIBLE_DEVICES=",
               "torchrun", "--nproc_per_node", "8", "train.py")
    assert done.returncode == 1
    assert done.stdout.splitlines()[-1].endswith(
        "on the CPU: `rankdebug smoke --cpu` sets --backend=gloo --device=cpu; but no flag "
        "reaches train.py:11 (device = f'cuda:{ddp_local_rank}'), train.py:12 "
        "(torch.cuda.set_device(device)): only an edit of the script runs it on the CPU")
    cpu = cli("smoke", "--check", "--cpu", "--cwd", str(tmp_path), "--", "torchrun",
              "--nproc_per_node", "8", "train.py")
    assert cpu.returncode == 1 and cpu.stdout.splitlines()[-1].endswith(
        "on the CPU: no flag reaches train.py:11 (device = f'cuda:{ddp_local_rank}'), "
        "train.py:12 (torch.cuda.set_device(device)): only an edit of the script runs it on "
        "the CPU")


def test_choices_the_script_makes_itself_are_not_uses(tmp_path: Path) -> None:
    write(tmp_path / "train.py", """
        import argparse, torch
        import torch.distributed as dist
        p = argparse.ArgumentParser()
        p.add_argument("--device", default="cuda")
        args = p.parse_args()
        backend = "nccl" if torch.cuda.is_available() else "gloo"
        if torch.cuda.is_available():
            dist.init_process_group("nccl")
        else:
            dist.init_process_group("gloo")
        model = torch.nn.Linear(2, 2).to(args.device)
    """)
    assert of_command("torchrun --nproc_per_node 2 train.py --device cpu", tmp_path).gpu_uses \
        == []
    [use] = of_command("torchrun --nproc_per_node 2 train.py", tmp_path).gpu_uses
    assert (use.what, use.knob, use.line) == ("--device (default 'cuda')", "device", 4)
    cpu = of_command("torchrun --nproc_per_node 2 train.py", tmp_path, cpu=True)
    assert cpu.argv[-2:] == ["--device", "cpu"] and cpu.gpu_uses == []


def test_ranks_out_of_the_hooks_reach_get_no_claim(tmp_path: Path) -> None:
    # srun may start the ranks on other machines: the smoke folder's hook is not there.
    shutil.copy(JOBS / "trainer" / "in_code.py", tmp_path / "train.py")
    result = of_command("srun -N 2 --ntasks-per-node 4 python train.py", tmp_path)
    assert result.hook == {} and "RANKDEBUG_SMOKE_STEPS" not in result.env
    assert [c.name for c in result.changes if c.name in ("max_steps", "output_dir")] == []
    assert ("max_steps", "not applied: the script builds its arguments in code, and the ranks "
            "may start out of the run-time hook's reach") in result.not_applied
    assert any(m.startswith("the smoke run cannot hold the job to 3 steps") for m in
               result.missing)

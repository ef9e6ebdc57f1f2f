"""The smoke run's shape per launcher, and the word editing under every rewrite."""

from __future__ import annotations

from pathlib import Path

import pytest
from smoke_helpers import changed, of_command

from rankdebug.smoke.args import ArgList, spellings


@pytest.mark.parametrize(("command", "argv", "shape"), [
    ("torchrun --nnodes 2 --node_rank 1 --nproc_per_node 8 --master_addr 10.0.0.1 train.py",
     ["torchrun", "--nnodes", "1", "--node_rank", "0", "--nproc_per_node", "2",
      "--master_addr", "10.0.0.1", "train.py"], (1, 2)),
    ("python -m torch.distributed.run --nproc-per-node=4 -m pkg.train",
     ["python", "-m", "torch.distributed.run", "--nproc-per-node=2", "-m", "pkg.train"], (1, 2)),
    ("CUDA_VISIBLE_DEVICES=0,1,2,3 torchrun --nproc_per_node gpu train.py",
     ["torchrun", "--nproc_per_node", "2", "train.py"], (1, 2)),
    ("accelerate launch --num_processes 16 --num_machines 2 --machine_rank 1 train.py",
     ["accelerate", "launch", "--num_processes", "2", "--num_machines", "1", "--machine_rank",
      "0", "train.py"], (1, 2)),
    ("deepspeed --num_nodes 2 --num_gpus 8 train.py",
     ["deepspeed", "--num_nodes", "1", "--num_gpus", "2", "train.py"], (1, 2)),
    ("msrun --worker_num 16 --local_worker_num 8 train.py",
     ["msrun", "--worker_num", "2", "--local_worker_num", "2", "train.py"], (1, 2)),
    ("mpirun -np 8 python train.py", ["mpirun", "-np", "2", "python", "train.py"], (1, 2)),
    ("python train.py", ["python", "train.py"], (1, 1)),
])
def test_shape(tmp_path: Path, command: str, argv: list[str], shape: tuple[int, int]) -> None:
    result = of_command(command, tmp_path)
    assert result.argv[:len(argv)] == argv
    to = result.plan["to"]
    assert isinstance(to, dict) and (to["nnodes"], to["nproc_per_node"]) == shape


def test_the_user_may_ask_for_more_ranks(tmp_path: Path) -> None:
    result = of_command("torchrun --nproc_per_node 8 train.py", tmp_path, nproc=4)
    assert changed(result, "--nproc_per_node").why == "4 ranks per node, as asked (--nproc)"
    assert result.argv[2] == "4"


def test_fewer_ranks_than_two_stay(tmp_path: Path) -> None:
    result = of_command("torchrun --nproc_per_node 1 train.py", tmp_path)
    assert result.argv == ["torchrun", "--nproc_per_node", "1", "train.py"]
    # No framework, so no step limit of its own: only the run-time stop is added.
    assert [c.name for c in result.changes] == ["RANKDEBUG_SMOKE_STEPS"]


def test_an_unknown_count_is_left_as_written(tmp_path: Path) -> None:
    result = of_command("torchrun --nproc_per_node $NGPU train.py", tmp_path)
    assert result.argv == ["torchrun", "--nproc_per_node", "2", "train.py"]
    assert any("$NGPU" in n for n in result.notes)


def test_deepspeed_include_is_left_to_the_user(tmp_path: Path) -> None:
    result = of_command("deepspeed --include localhost:0,1,2,3 train.py", tmp_path)
    assert "--include" in result.argv and "--num_gpus" not in result.argv
    assert any("--include" in n for n in result.notes)


def test_args_forms() -> None:
    args = ArgList.of("--a", "1", "--b=2", "--flag", "--neg", "-3", "key=v", "+new=x")
    assert args.value(("--a",)) == "1" and args.value(("--b",)) == "2"
    hit = args.find(("--flag",))
    assert hit is not None and hit.value is None
    assert args.value(("--neg",)) == "-3"  # a negative number is a value, not a flag
    args.set(("--b",), "5")
    args.set(("--flag",), "yes")
    args.set(("--c",), "9", joined=True)
    assert args.texts == ["--a", "1", "--b=5", "--flag", "yes", "--neg", "-3", "key=v",
                          "+new=x", "--c=9"]
    assert args.override("new") == "x"
    args.set_override("new", "y")
    args.set_override("other", "z")
    assert args.texts[-3:] == ["+new=y", "--c=9", "other=z"]
    assert args.remove(("--a",)) is not None and args.texts[0] == "--b=5"
    assert spellings("--max_steps") == ("--max_steps", "--max-steps")


def test_every_launcher_is_said_local_or_not() -> None:
    """A launcher added to the table is one the smoke hook reaches (its ranks start here,
    with its environment) unless it is one that may start ranks elsewhere."""
    from rankdebug import launcher_table
    from rankdebug.smoke.context import LOCAL_LAUNCHERS

    elsewhere = {"srun", "mpirun", "ray", "msrun", "horovodrun"}
    names = {row.name for row in launcher_table.TABLE}
    assert names - LOCAL_LAUNCHERS - elsewhere == set()

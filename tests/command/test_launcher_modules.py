"""The launcher modules: evaluated argv → launch plan, one rule at a time."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from rankdebug import launcher_table
from rankdebug.command import plan_all
from rankdebug.command.launchers import (
    MODULES,
    Context,
    find_launcher,
    plan_argv,
    spec_for,
    unwrap,
    unwrap_full,
)
from rankdebug.command.launchers.common import count_visible, parse_python, split_last
from rankdebug.command.launchers.inner import RANK_MODULES
from rankdebug.command.options import Parsed, Spec, both, flag, parse_options, value
from rankdebug.command.plan import Diagnostic, LaunchPlan
from rankdebug.command.words import Part, Span, Word

# -- helpers -----------------------------------------------------------------------


def _word(token: str, line: int, col: int) -> Word:
    """A word as the shell layer would give it: ``$X`` is unknown, ``--a=$X`` partly."""
    span = Span(line, col, line, col + len(token))
    if token.startswith("$"):
        return Word.unknown(token, span, f"{token} is not set")
    if "=$" in token:
        head, _, tail = token.partition("=$")
        return Word((Part(head + "="), Part("$" + tail, known=False)), span, token,
                    f"${tail} is not set")
    return Word.literal(token, span)


def words(command: str, line: int = 0) -> list[Word]:
    out: list[Word] = []
    col = 0
    for token in command.split(" "):
        if token:
            out.append(_word(token, line, col))
        col += len(token) + 1
    return out


def env_of(**values: str) -> dict[str, Word]:
    return {k: (Word.unknown(v, Span.point(0, 0), f"{v} is not set") if v.startswith("$")
                else Word.literal(v)) for k, v in values.items()}


def plan(
    command: str | Sequence[Word],
    env: Mapping[str, Word] | None = None,
    *,
    shell_vars: Mapping[str, Word] | None = None,
    cwd: Path | None = None,
    sbatch: Sequence[Word] = (),
) -> LaunchPlan:
    argv = words(command) if isinstance(command, str) else list(command)
    p = LaunchPlan(launcher="other", argv=argv, span=Span(0, 0, 0, 0))
    plan_argv(Context(p, env or {}, shell_vars or {}, cwd, sbatch))
    return p


def target(p: LaunchPlan) -> tuple[str, str] | None:
    return (p.entry.kind, p.entry.target.display) if p.entry else None


def args(p: LaunchPlan) -> list[str]:
    return [w.display for w in p.entry_args]


def numbers(p: LaunchPlan) -> tuple[object, ...]:
    return (p.nnodes, p.node_rank, p.nproc_per_node, p.world_size)


def diags(p: LaunchPlan, code: str) -> list[Diagnostic]:
    return [d for d in p.diagnostics if d.code == code]


def warned(p: LaunchPlan, fragment: str) -> bool:
    return any(fragment in m for m in p.warnings)


def info(p: LaunchPlan, fragment: str) -> bool:
    return any(fragment in d.message for d in p.diagnostics if d.severity == "info")


# -- the option parser -------------------------------------------------------------


SPEC = Spec("tool", [both("nproc_per_node"), value("nnodes", "--nnodes"),
                     flag("module", "-m", "--module"), value("redirects", "-r", "--redirects"),
                     value("mca", "--mca", nargs=2)], abbrev=True)


def _parse(command: str, spec: Spec = SPEC) -> tuple[LaunchPlan, Parsed]:
    p = LaunchPlan(launcher="other", argv=words(command), span=Span(0, 0, 0, 0))
    return p, parse_options(p, p.argv, 0, spec)


def test_parser_spellings_and_forms() -> None:
    p, parsed = _parse("--nproc-per-node 4 --nnodes=2 -r3 -m train.py --lr 1")
    assert [o.name for o in p.options] == ["nproc_per_node", "nnodes", "redirects", "module"]
    assert [o.flag for o in p.options] == ["--nproc-per-node", "--nnodes", "-r", "-m"]
    assert [o.value.display if o.value else None for o in p.options] == ["4", "2", "3", None]
    assert parsed.end == 5


def test_parser_spans_cover_flag_and_value() -> None:
    p, _ = _parse("--nproc_per_node 4 --nnodes=2 x.py")
    assert p.options[0].span == Span(0, 0, 0, 18)
    assert p.options[1].span == Span(0, 19, 0, 29)
    assert p.options[1].value is not None and p.options[1].value.span == Span(0, 28, 0, 29)


def test_parser_abbreviation_and_ambiguity() -> None:
    p, _ = _parse("--nproc_per 2 --nn 3 x.py")
    assert [(o.name, o.flag) for o in p.options] == [("nproc_per_node", "--nproc_per"),
                                                     ("nnodes", "--nn")]
    # Both spellings of one option are one option, not an ambiguity.
    p, _ = _parse("--nproc 2 x.py")
    assert p.options[0].name == "nproc_per_node"
    spec = Spec("tool", [value("alpha_one", "--alpha_one"), value("alpha_two", "--alpha_two")],
                abbrev=True)
    p, _ = _parse("--alpha 1 x.py", spec)
    assert diags(p, "ambiguous-flag")


def test_parser_no_abbreviation_when_tool_has_none() -> None:
    spec = Spec("tool", [value("num_processes", "--num_processes")])
    p, _ = _parse("--num_proc 2 x.py", spec)
    assert not p.options
    assert diags(p, "unknown-flag")[0].fix == "--num_processes"


def test_parser_unknown_flag_fix_and_span() -> None:
    p, parsed = _parse("--nproc_pre_node 4 train.py")
    (d,) = diags(p, "unknown-flag")
    assert d.fix == "--nproc_per_node"
    assert "did you mean --nproc_per_node" in d.message
    assert d.span == Span(0, 0, 0, 16)
    assert d.severity == "error"
    # The misspelt option's value is not mistaken for the program.
    assert parsed.end == 2


def test_parser_unknown_flag_with_attached_value() -> None:
    p, parsed = _parse("--nnodez=2 train.py")
    (d,) = diags(p, "unknown-flag")
    assert d.fix == "--nnodes"
    assert d.span == Span(0, 0, 0, 8)
    assert parsed.end == 1


def test_parser_two_values_and_double_dash() -> None:
    _p, parsed = _parse("--mca btl tcp -- x.py")
    assert [w.display for w in parsed.uses[0].values] == ["btl", "tcp"]
    assert parsed.end == 4 and parsed.double_dash


def test_parser_incomplete_spec_reports_nothing() -> None:
    spec = Spec("tool", [value("np", "-np")], single_dash_long=True, complete=False)
    p, _parsed = _parse("-np 4 --bind-to core python x.py", spec)
    assert not diags(p, "unknown-flag")
    assert p.options[0].value is not None and p.options[0].value.display == "4"


def test_parser_opaque_words() -> None:
    p, parsed = _parse("$DIST_ARGS train.py --lr 1")
    assert parsed.end == 1
    assert [w.display for w in parsed.opaque] == ["$DIST_ARGS"]
    assert warned(p, "$DIST_ARGS is not known")
    # An unknown word followed by the script's own options is the program.
    p, parsed = _parse("--nnodes 1 $SCRIPT --config x.yaml")
    assert parsed.end == 2 and not parsed.opaque


def test_parser_partly_unknown_value() -> None:
    p, _ = _parse("--nproc_per_node=$NGPUS x.py")
    value_word = p.options[0].value
    assert value_word is not None and value_word.value is None
    assert value_word.display == "$NGPUS"


# -- unwrap ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "index"),
    [
        ("nohup torchrun x.py", 1),
        ("env A=1 B=2 torchrun x.py", 3),
        ("env -i -u X A=1 torchrun x.py", 5),
        ("time -p nice -n 10 torchrun x.py", 5),
        ("nice -10 python x.py", 2),
        ("numactl --cpunodebind=0 --membind 0 python x.py", 4),
        ("numactl -N 0 -m 0 python x.py", 5),
        ("taskset -c 0-7 python x.py", 3),
        ("timeout -s INT 2h torchrun x.py", 4),
        ("stdbuf -oL -eL python x.py", 3),
        ("setsid -w sudo -E A=1 python x.py", 5),
        ("exec command python x.py", 2),
        ("/usr/bin/env PYTHONUNBUFFERED=1 python x.py", 2),
        ("python x.py", 0),
        ("uv run torchrun x.py", 2),
        ("uv run --with torch -p 3.11 --no-sync torchrun x.py", 7),
        ("uv run --frozen -- python x.py", 4),
        ("conda run -n train --no-capture-output torchrun x.py", 5),
        ("micromamba run -p /opt/env python x.py", 4),
        ("poetry run accelerate launch x.py", 2),
        ("pixi run -e cuda torchrun x.py", 4),
        ("pdm run --venv in-project python x.py", 4),
        ("pipenv run nohup python x.py", 3),
        ("uv pip install torch", 0),  # not a command of the user's
        ("conda activate env", 0),
    ],
)
def test_unwrap_index(command: str, index: int) -> None:
    assert unwrap(words(command))[0] == index


def test_unwrap_reports_assignments() -> None:
    idx, env = unwrap(words("env CUDA_VISIBLE_DEVICES=0,1 NCCL_DEBUG=INFO torchrun x.py"))
    assert idx == 3
    assert {k: v.value for k, v in env.items()} == {"CUDA_VISIBLE_DEVICES": "0,1",
                                                    "NCCL_DEBUG": "INFO"}
    full = unwrap_full(words("env -i -u HOME A=1 sudo B=2 python x.py"))
    assert full.clear_env and "HOME" in full.unset
    assert set(full.env) == {"A", "B"} and full.wrappers == ["env", "sudo"]


@pytest.mark.parametrize("runner", ["uv run --no-sync", "conda run -n train", "poetry run",
                                    "pixi run"])
def test_an_environment_managers_run_is_planned_as_the_command_it_runs(runner: str) -> None:
    p = plan(f"{runner} torchrun --nproc_per_node gpu x.py --lr 1",
             env_of(CUDA_VISIBLE_DEVICES="0,1"))
    assert p.launcher == "torchrun" and p.world_size == 2
    assert target(p) == ("script", "x.py")
    assert [a.value for a in p.entry_args] == ["--lr", "1"]


def test_env_wrapper_feeds_the_plan() -> None:
    p = plan("env CUDA_VISIBLE_DEVICES=0,1,2 torchrun --nproc_per_node gpu x.py")
    assert p.launcher == "torchrun"
    assert p.env["CUDA_VISIBLE_DEVICES"].value == "0,1,2"
    assert p.world_size == 3 and p.visible_devices == 3
    # env -i drops the caller's CUDA_VISIBLE_DEVICES.
    p = plan("env -i torchrun --nproc_per_node gpu x.py", env_of(CUDA_VISIBLE_DEVICES="0,1"))
    assert p.world_size is None
    assert p.entry_index == 5


# -- torchrun ----------------------------------------------------------------------


def test_torchrun_design_example() -> None:
    p = plan("torchrun --nproc_per_node 4 src/train.py --model_name llama31 --learning_rate 1e-4",
             env_of(CUDA_VISIBLE_DEVICES="0,1,2,3"))
    assert p.launcher == "torchrun"
    assert numbers(p) == (1, 0, 4, 4)
    assert target(p) == ("script", "src/train.py")
    assert args(p) == ["--model_name", "llama31", "--learning_rate", "1e-4"]
    assert p.entry_index == 3
    assert p.warnings == []
    assert [r.local_rank for r in p.ranks] == [0, 1, 2, 3]


def test_torchrun_defaults() -> None:
    p = plan("torchrun train.py")
    assert numbers(p) == (1, 0, 1, 1)
    assert p.warnings == []


@pytest.mark.parametrize(
    "flags",
    ["--nproc-per-node 8", "--nproc_per_node 8", "--nproc_per_node=8", "--nproc-per-node=8",
     "--nproc_per 8", "--nproc-per-n=8"],
)
def test_torchrun_nproc_spellings(flags: str) -> None:
    p = plan(f"torchrun --nnodes 2 {flags} train.py")
    assert p.nproc_per_node == 8 and p.world_size == 16
    assert p.option("nproc_per_node") is not None


def test_python_m_torch_distributed_run() -> None:
    p = plan("python3 -u -m torch.distributed.run --nnodes=2 --node-rank=1 --nproc-per-node=2 "
             "train.py --epochs 3")
    assert p.launcher == "torchrun"
    assert numbers(p) == (2, 1, 2, 4)
    assert p.entry_index == 7
    assert args(p) == ["--epochs", "3"]


def test_torchrun_standalone() -> None:
    p = plan("torchrun --standalone --nproc_per_node 2 train.py")
    assert numbers(p) == (1, 0, 2, 2)
    assert p.master_port is None
    p = plan("torchrun --standalone --nnodes 2 train.py")
    assert p.nnodes == 1 and diags(p, "conflict")


def test_torchrun_elastic_range() -> None:
    p = plan("torchrun --nnodes 2:4 --nproc_per_node 8 train.py")
    assert p.nnodes is None and p.nnodes_range == (2, 4)
    assert p.world_size is None and p.nproc_per_node == 8
    assert warned(p, "elastic")
    p = plan("torchrun --nnodes 3:3 --nproc_per_node 8 train.py")
    assert p.nnodes == 3 and p.world_size == 24 and p.nnodes_range is None


@pytest.mark.parametrize("word", ["gpu", "auto"])
def test_torchrun_device_words(word: str) -> None:
    p = plan(f"torchrun --nproc_per_node {word} train.py", env_of(CUDA_VISIBLE_DEVICES="4,5"))
    assert p.nproc_per_node == word and p.world_size == 2 and p.visible_devices == 2
    assert len(p.ranks) == 2
    p = plan(f"torchrun --nnodes 2 --nproc_per_node {word} train.py",
             env_of(ASCEND_RT_VISIBLE_DEVICES="0,1,2,3"))
    assert p.world_size == 8
    p = plan(f"torchrun --nproc_per_node {word} train.py")
    assert p.nproc_per_node == word and p.world_size is None
    assert warned(p, "CUDA_VISIBLE_DEVICES is not set")


def test_torchrun_device_count_sources() -> None:
    p = plan("torchrun --nproc_per_node gpu x.py", env_of(NVIDIA_VISIBLE_DEVICES="0,1,2"))
    assert p.world_size == 3
    p = plan("torchrun --nproc_per_node gpu x.py", env_of(NVIDIA_VISIBLE_DEVICES="all"))
    assert p.world_size is None and warned(p, "does not say how many")
    p = plan("torchrun --nproc_per_node gpu x.py", env_of(HIP_VISIBLE_DEVICES="0"))
    assert p.world_size == 1
    p = plan("torchrun --nproc_per_node gpu x.py", env_of(CUDA_VISIBLE_DEVICES="$GPUS"))
    assert p.world_size is None and warned(p, "$GPUS")
    p = plan("torchrun --nproc_per_node gpu x.py", env_of(CUDA_VISIBLE_DEVICES=""))
    assert p.world_size is None and diags(p, "no-devices")
    p = plan("torchrun --nproc_per_node cpu x.py", env_of(CUDA_VISIBLE_DEVICES="0"))
    assert p.nproc_per_node == "cpu" and p.world_size is None and warned(p, "CPU core")


def test_torchrun_unknown_numbers() -> None:
    p = plan("torchrun --nproc_per_node $NGPUS train.py")
    assert p.nproc_per_node is None and p.world_size is None
    assert "--nproc_per_node is $NGPUS, which is not known ($NGPUS is not set)" in p.warnings
    p = plan("torchrun --nnodes 2 --node_rank $NODE_RANK --nproc_per_node 8 train.py")
    assert p.node_rank is None and p.world_size == 16
    assert warned(p, "--node_rank is $NODE_RANK")
    p = plan("torchrun --nnodes=$NNODES --nproc_per_node 8 train.py")
    assert p.nnodes is None and p.world_size is None and warned(p, "$NNODES")
    p = plan("torchrun --nproc_per_node 1.5 train.py")
    assert p.nproc_per_node is None and warned(p, "1.5")


def test_torchrun_pet_environment() -> None:
    p = plan("torchrun train.py", env_of(PET_NPROC_PER_NODE="4", PET_NNODES="2",
                                         PET_NODE_RANK="1", PET_MASTER_ADDR="10.0.0.1",
                                         PET_MASTER_PORT="29600"))
    assert numbers(p) == (2, 1, 4, 8)
    assert p.master_addr is not None and p.master_addr.value == "10.0.0.1"
    assert p.master_port is not None and p.master_port.value == "29600"
    # The command line wins over PET_*.
    p = plan("torchrun --nproc_per_node 2 train.py", env_of(PET_NPROC_PER_NODE="4"))
    assert p.nproc_per_node == 2
    p = plan("torchrun train.py", env_of(PET_STANDALONE="1", PET_NNODES="3"))
    assert p.nnodes == 1
    p = plan("torchrun pkg.train", env_of(PET_MODULE="1"))
    assert target(p) == ("module", "pkg.train")


def test_torchrun_entry_kinds() -> None:
    p = plan("torchrun --nproc_per_node 2 -m pkg.train --x 1")
    assert target(p) == ("module", "pkg.train") and p.entry_index == 4
    assert args(p) == ["--x", "1"]
    p = plan("torchrun --module pkg.train")
    assert target(p) == ("module", "pkg.train")
    p = plan("torchrun --no-python ./run.sh a")
    assert target(p) == ("cli", "./run.sh") and args(p) == ["a"]
    p = plan("torchrun --no_python bash run.sh")
    assert target(p) == ("cli", "bash")
    p = plan("torchrun --run-path /abs/train.py")
    assert target(p) == ("script", "/abs/train.py")
    p = plan("torchrun --nproc_per_node 2")
    assert p.entry is None and diags(p, "missing-entry")


def test_torchrun_master_and_rendezvous() -> None:
    p = plan("torchrun --master_addr 10.1.1.1 --master-port=29501 x.py")
    assert p.master_addr is not None and p.master_addr.value == "10.1.1.1"
    assert p.master_port is not None and p.master_port.value == "29501"
    p = plan("torchrun --nnodes 2 --rdzv-backend c10d --rdzv-endpoint head:29400 x.py")
    assert p.master_addr is not None and p.master_addr.value == "head"
    assert p.master_port is not None and p.master_port.value == "29400"
    assert info(p, "node ranks are assigned")
    endpoint = Word((Part("--rdzv_endpoint="), Part("$HEAD", known=False), Part(":29400")),
                    Span(0, 9, 0, 36), "--rdzv_endpoint=$HEAD:29400", "$HEAD is not set")
    p = plan([*words("torchrun"), endpoint, Word.literal("x.py", Span(0, 37, 0, 41))])
    assert p.master_addr is not None and p.master_addr.value is None
    assert p.master_port is not None and p.master_port.value == "29400"


def test_torchrun_misspelt_flag() -> None:
    p = plan("torchrun --nproc_pre_node 4 train.py")
    (d,) = diags(p, "unknown-flag")
    assert d.fix == "--nproc_per_node" and "torchrun" in d.message
    assert target(p) == ("script", "train.py")
    p = plan("torchrun --nnodez=2 train.py")
    assert diags(p, "unknown-flag")[0].fix == "--nnodes"
    p = plan("torchrun -nproc_per_node 2 train.py")
    assert diags(p, "unknown-flag")[0].fix == "--nproc_per_node"
    assert target(p) == ("script", "train.py")


def test_torchrun_options_recorded() -> None:
    p = plan("torchrun --nnodes 1 --nproc_per_node 2 --max-restarts 3 -r 3 -t 0:3 x.py")
    assert [o.name for o in p.options] == ["nnodes", "nproc_per_node", "max_restarts",
                                           "redirects", "tee"]


def test_torchrun_opaque_arguments() -> None:
    p = plan("torchrun $DISTRIBUTED_ARGS pretrain_gpt.py --tp 2")
    assert target(p) == ("script", "pretrain_gpt.py")
    assert p.nnodes is None and p.nproc_per_node is None and p.world_size is None
    assert warned(p, "may set it")
    p = plan("torchrun --nnodes 1 --nproc_per_node 2 $SCRIPT --lr 1")
    assert target(p) == ("script", "$SCRIPT") and p.world_size == 2


# -- torch.distributed.launch --------------------------------------------------------


def test_torch_distributed_launch() -> None:
    p = plan("python -m torch.distributed.launch --nproc_per_node=2 --use_env train.py --a 1")
    assert p.launcher == "torch.distributed.launch"
    assert numbers(p) == (1, 0, 2, 2)
    assert args(p) == ["--a", "1"]
    assert not info(p, "--local-rank")
    p = plan("python -m torch.distributed.launch --nproc_per_node 2 --master_port 1234 x.py")
    assert info(p, "--local-rank=N")
    assert args(p) == []
    p = plan("python3 -m torch.distributed.launch --use-env --nnodes 2 --nproc-per-node 4 x.py")
    assert p.world_size == 8 and not info(p, "--local-rank")


# -- deepspeed ---------------------------------------------------------------------


def test_deepspeed_num_gpus() -> None:
    p = plan("deepspeed --num_gpus 4 train.py --deepspeed_config ds.json")
    assert p.launcher == "deepspeed"
    assert numbers(p) == (1, 0, 4, 4)
    assert target(p) == ("script", "train.py")
    assert args(p) == ["--deepspeed_config", "ds.json"]
    assert p.master_port is not None and p.master_port.value == "29500"
    assert info(p, "--local_rank")
    p = plan("deepspeed --num_gpus=2 --num_accelerators 3 train.py")
    assert p.nproc_per_node == 3


def test_deepspeed_visible_devices() -> None:
    p = plan("deepspeed train.py", env_of(CUDA_VISIBLE_DEVICES="0,1"))
    assert numbers(p) == (1, 0, 2, 2)
    p = plan("deepspeed train.py")
    assert numbers(p) == (1, 0, None, None)
    assert warned(p, "CUDA_VISIBLE_DEVICES is not set")


def test_deepspeed_include_exclude() -> None:
    p = plan("deepspeed --include localhost:0,1 train.py", env_of(CUDA_VISIBLE_DEVICES="0,1,2"))
    assert numbers(p) == (1, 0, 2, 2)
    p = plan("deepspeed -i localhost:1 train.py")
    assert p.world_size == 1
    p = plan("deepspeed --exclude localhost:0 train.py", env_of(CUDA_VISIBLE_DEVICES="0,1"))
    assert p.nproc_per_node is None and warned(p, "counts every GPU")
    p = plan("deepspeed --include host1:0,1@host2:2 train.py")
    assert (p.nnodes, p.nproc_per_node, p.world_size) == (2, None, 3)
    assert diags(p, "no-hostfile")


def test_deepspeed_hostfile(tmp_path: Path) -> None:
    (tmp_path / "hostfile").write_text("# nodes\nworker-1 slots=4\nworker-2 slots=4\n\n")
    p = plan("deepspeed --hostfile hostfile train.py", cwd=tmp_path)
    assert (p.nnodes, p.nproc_per_node, p.world_size) == (2, 4, 8)
    assert p.node_rank is None and info(p, "starts all 2 nodes")
    p = plan("deepspeed --hostfile=hostfile --num_nodes 1 train.py", cwd=tmp_path)
    assert numbers(p) == (1, 0, 4, 4)
    p = plan("deepspeed -H hostfile --num_gpus 2 train.py", cwd=tmp_path)
    assert (p.nnodes, p.world_size) == (2, 4)
    p = plan("deepspeed --hostfile hostfile --include worker-2:0,1 train.py", cwd=tmp_path)
    assert (p.nnodes, p.nproc_per_node, p.world_size) == (1, 2, 2)
    p = plan("deepspeed --hostfile hostfile --exclude worker-1 train.py", cwd=tmp_path)
    assert (p.nnodes, p.world_size) == (1, 4)
    p = plan("deepspeed --hostfile hostfile --exclude worker-1:0 train.py", cwd=tmp_path)
    assert (p.nnodes, p.nproc_per_node, p.world_size) == (2, None, 7)
    (tmp_path / "uneven").write_text("a slots=8\nb slots=4\n")
    p = plan("deepspeed --hostfile uneven train.py", cwd=tmp_path)
    assert (p.nnodes, p.nproc_per_node, p.world_size) == (2, None, 12)


def test_deepspeed_hostfile_unreadable_or_missing(tmp_path: Path) -> None:
    p = plan("deepspeed --num_nodes 2 --num_gpus 8 --hostfile hostfile train.py")
    assert (p.nnodes, p.nproc_per_node, p.world_size) == (2, 8, 16)
    assert diags(p, "unreadable-file")
    p = plan("deepspeed --hostfile hostfile train.py")
    assert p.nnodes is None and p.world_size is None
    # A hostfile that does not exist means this machine (runner.fetch_hostfile).
    p = plan("deepspeed --hostfile missing --num_gpus 2 train.py", cwd=tmp_path)
    assert numbers(p) == (1, 0, 2, 2) and info(p, "does not exist")


def test_deepspeed_entry_and_flags() -> None:
    p = plan("deepspeed --module --num_gpus 1 pkg.train --x")
    assert target(p) == ("module", "pkg.train") and args(p) == ["--x"]
    p = plan("deepspeed --no_python --no_local_rank --num_gpus 1 ./run.sh")
    assert target(p) == ("cli", "./run.sh") and not info(p, "--local_rank")
    p = plan("python -m deepspeed.launcher.runner --num_gpus 2 --master_port 29600 train.py")
    assert p.launcher == "deepspeed" and p.world_size == 2
    assert p.master_port is not None and p.master_port.value == "29600"
    p = plan("deepspeed --num_gpu 2 train.py")  # an abbreviation argparse accepts
    assert p.nproc_per_node == 2
    p = plan("deepspeed --num-gpus 2 train.py")
    assert diags(p, "unknown-flag")[0].fix == "--num_gpus"


def test_deepspeed_no_ssh_node_rank() -> None:
    p = plan("deepspeed --no_ssh --node_rank 1 --num_nodes 2 --num_gpus 8 --hostfile hf train.py")
    assert (p.nnodes, p.node_rank, p.world_size) == (2, 1, 16)


def test_deepspeed_opaque_arguments() -> None:
    p = plan("deepspeed $DS_ARGS train.py --deepspeed")
    assert target(p) == ("script", "train.py")
    assert (p.nnodes, p.nproc_per_node, p.world_size) == (None, None, None)
    assert warned(p, "$DS_ARGS")


def test_deepspeed_conflicts() -> None:
    p = plan("deepspeed --include localhost:0 --num_gpus 1 train.py")
    assert diags(p, "conflict")


# -- accelerate --------------------------------------------------------------------


def test_accelerate_total_processes() -> None:
    p = plan("accelerate launch --multi_gpu --num_processes 8 train.py --bs 4")
    assert p.launcher == "accelerate"
    assert numbers(p) == (1, 0, 8, 8)
    assert target(p) == ("script", "train.py") and args(p) == ["--bs", "4"]
    p = plan("accelerate launch --num_processes 16 --num_machines 2 --machine_rank 1 "
             "--main_process_ip 10.0.0.1 --main_process_port 29500 train.py")
    assert numbers(p) == (2, 1, 8, 16)
    assert p.master_addr is not None and p.master_addr.value == "10.0.0.1"
    assert p.master_port is not None and p.master_port.value == "29500"


@pytest.mark.parametrize("command", [
    "accelerate launch --num-processes 4 x.py",
    "accelerate launch --num_processes=4 x.py",
    "accelerate launch --num-processes=4 x.py",
    "accelerate-launch --num_processes 4 x.py",
    "python -m accelerate.commands.launch --num_processes 4 x.py",
    "python -m accelerate.commands.accelerate_cli launch --num_processes 4 x.py",
])
def test_accelerate_spellings(command: str) -> None:
    p = plan(command)
    assert p.launcher == "accelerate" and p.world_size == 4
    assert target(p) == ("script", "x.py")


def test_accelerate_uneven_and_missing() -> None:
    p = plan("accelerate launch --num_processes 6 --num_machines 4 --machine_rank 0 x.py")
    assert p.world_size == 6 and p.nproc_per_node is None and diags(p, "uneven")
    p = plan("accelerate launch x.py", env_of(CUDA_VISIBLE_DEVICES="0,1"))
    assert p.world_size is None and p.nproc_per_node is None
    assert warned(p, "--num_processes is not given") and warned(p, "2 visible")
    p = plan("accelerate launch --num_processes 8 --num_machines 2 x.py")
    assert p.node_rank is None and warned(p, "--machine_rank")


def test_accelerate_no_abbreviations() -> None:
    p = plan("accelerate launch --num_proc 2 x.py")
    (d,) = diags(p, "unknown-flag")
    assert d.fix in ("--num_processes", "--num-processes")
    p = plan("accelerate launch --mixed-precision bf16 --use_deepspeed --zero_stage 3 "
             "--fsdp_sharding_strategy FULL_SHARD --dynamo_backend no --num_processes 2 x.py")
    assert not diags(p, "unknown-flag") and p.world_size == 2
    assert {o.name for o in p.options} >= {"mixed_precision", "use_deepspeed", "zero_stage"}


def test_accelerate_entry_kinds() -> None:
    p = plan("accelerate launch --num_processes 2 -m pkg.train --x")
    assert target(p) == ("module", "pkg.train") and args(p) == ["--x"]
    p = plan("accelerate launch --num_processes 2 --no_python ./run.sh")
    assert target(p) == ("cli", "./run.sh")


def test_accelerate_config_file(tmp_path: Path) -> None:
    (tmp_path / "cfg.yaml").write_text(
        "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nnum_machines: 2\n"
        "machine_rank: 0\nnum_processes: 16\nmain_process_port: 29555\n"
    )
    p = plan("accelerate launch --config_file cfg.yaml train.py", cwd=tmp_path)
    assert numbers(p) == (2, 0, 8, 16)
    assert p.master_port is not None and p.master_port.value == "29555"
    # The command line overrides the file.
    p = plan("accelerate launch --config-file cfg.yaml --num_processes 4 --machine_rank 1 x.py",
             cwd=tmp_path)
    assert numbers(p) == (2, 1, 2, 4)
    p = plan("accelerate launch --config_file nowhere.yaml x.py", cwd=tmp_path)
    assert p.world_size is None and diags(p, "unreadable-file")


def test_accelerate_default_config(tmp_path: Path) -> None:
    cfg = tmp_path / "hf" / "accelerate"
    cfg.mkdir(parents=True)
    (cfg / "default_config.yaml").write_text("num_processes: 4\nnum_machines: 1\n")
    p = plan("accelerate launch x.py", env_of(HF_HOME=str(tmp_path / "hf")))
    assert numbers(p) == (1, 0, 4, 4) and info(p, "default config")


# -- llamafactory-cli ---------------------------------------------------------------


def test_llamafactory_force_torchrun() -> None:
    p = plan("llamafactory-cli train examples/train_lora/llama3_lora_sft.yaml",
             env_of(FORCE_TORCHRUN="1", CUDA_VISIBLE_DEVICES="0,1,2,3"))
    assert p.launcher == "llamafactory-cli"
    assert numbers(p) == (1, 0, 4, 4)
    assert target(p) == ("cli", "llamafactory-cli")
    assert args(p) == ["train", "examples/train_lora/llama3_lora_sft.yaml"]
    assert p.entry_index == 0


def test_llamafactory_multi_node_env() -> None:
    p = plan("llamafactory-cli train x.yaml", env_of(
        FORCE_TORCHRUN="true", NNODES="2", NODE_RANK="1", NPROC_PER_NODE="8",
        MASTER_ADDR="192.168.0.1", MASTER_PORT="29500"))
    assert numbers(p) == (2, 1, 8, 16)
    assert p.master_addr is not None and p.master_addr.value == "192.168.0.1"


def test_llamafactory_single_device() -> None:
    p = plan("llamafactory-cli train x.yaml", env_of(CUDA_VISIBLE_DEVICES="0"))
    assert numbers(p) == (1, 0, 1, 1)
    p = plan("lmf train x.yaml", env_of(CUDA_VISIBLE_DEVICES="0,1"))
    assert p.launcher == "llamafactory-cli" and p.world_size == 2
    p = plan("llamafactory-cli train x.yaml")
    assert p.world_size is None and warned(p, "not known whether")
    p = plan("llamafactory-cli train x.yaml", env_of(FORCE_TORCHRUN="1"))
    assert p.nproc_per_node is None and warned(p, "CUDA_VISIBLE_DEVICES is not set")
    p = plan("llamafactory-cli train x.yaml", env_of(FORCE_TORCHRUN="$F"))
    assert p.world_size is None and warned(p, "FORCE_TORCHRUN is $F")


def test_llamafactory_other_commands_and_ray() -> None:
    p = plan("llamafactory-cli export merge.yaml", env_of(CUDA_VISIBLE_DEVICES="0,1"))
    assert numbers(p) == (1, 0, 1, 1)
    p = plan("llamafactory-cli train x.yaml", env_of(USE_RAY="1", CUDA_VISIBLE_DEVICES="0,1"))
    assert p.world_size is None and warned(p, "USE_RAY")


def test_llamafactory_not_exported() -> None:
    p = plan("llamafactory-cli train x.yaml", env_of(CUDA_VISIBLE_DEVICES="0,1"),
             shell_vars=env_of(NPROC_PER_NODE="4", CUDA_VISIBLE_DEVICES="0,1"))
    (d,) = diags(p, "not-exported")
    assert "NPROC_PER_NODE" in d.message
    assert p.nproc_per_node == 2  # the CLI does not see NPROC_PER_NODE


def test_llamafactory_elastic() -> None:
    p = plan("llamafactory-cli train x.yaml", env_of(
        FORCE_TORCHRUN="1", NPROC_PER_NODE="8", RDZV_ID="job", MIN_NNODES="1",
        MAX_NNODES="3"))
    assert p.nnodes is None and p.nnodes_range == (1, 3) and p.world_size is None


# -- msrun -------------------------------------------------------------------------


def test_msrun() -> None:
    p = plan("msrun --worker_num=8 --local_worker_num=8 --master_port=8118 --log_dir=msrun_log "
             "--join=True --cluster_time_out=300 train.py --config_path=x.yaml")
    assert p.launcher == "msrun"
    assert numbers(p) == (1, 0, 8, 8)
    assert target(p) == ("script", "train.py") and args(p) == ["--config_path=x.yaml"]
    p = plan("msrun train.py")
    assert numbers(p) == (1, 0, 8, 8)
    p = plan("msrun --worker_num 16 --local_worker_num 8 --node_rank 1 --master_addr h train.py")
    assert numbers(p) == (2, 1, 8, 16)
    p = plan("msrun --worker_num 16 --local_worker_num 8 train.py")
    assert p.node_rank is None and info(p, "assigns this node's rank")
    p = plan("msrun --worker_num 6 --local_worker_num 4 train.py")
    assert p.nnodes is None and diags(p, "uneven")
    p = plan("msrun --worker_num $W --local_worker_num 2 train.py")
    assert p.world_size is None and warned(p, "--worker_num is $W")
    assert (p.nnodes, p.node_rank, p.nproc_per_node) == (None, 0, 2)
    p = plan("python -m mindspore.parallel.cluster.run --worker_n 2 --local_worker 2 run.sh")
    assert p.launcher == "msrun" and p.world_size == 2 and target(p) == ("cli", "run.sh")


# -- mpirun ------------------------------------------------------------------------


def test_mpirun_single_node() -> None:
    p = plan("mpirun -np 4 python train.py --lr 1")
    assert p.launcher == "mpirun"
    assert numbers(p) == (1, 0, 4, 4)
    assert target(p) == ("script", "train.py") and args(p) == ["--lr", "1"]
    assert p.entry_index == 4
    p = plan("mpiexec -n 2 python -m pkg.main")
    assert target(p) == ("module", "pkg.main") and p.world_size == 2
    p = plan("orterun --np 3 ./a.out")
    assert target(p) == ("cli", "./a.out") and p.world_size == 3


def test_mpirun_hosts() -> None:
    p = plan("mpirun -np 8 -H server1:4,server2:4 -bind-to none -map-by slot -x NCCL_DEBUG=INFO "
             "-x LD_LIBRARY_PATH -mca pml ob1 -mca btl ^openib python train.py")
    assert (p.nnodes, p.nproc_per_node, p.world_size) == (2, 4, 8)
    assert target(p) == ("script", "train.py")
    assert p.node_rank is None and info(p, "starts all 2 nodes")
    p = plan("mpirun -H a:2,b:2 python x.py")
    assert (p.nnodes, p.nproc_per_node, p.world_size) == (2, 2, 4)
    p = plan("mpirun -np 8 -N 4 python x.py")
    assert (p.nnodes, p.nproc_per_node, p.world_size) == (2, 4, 8)
    p = plan("mpirun -np 8 --map-by ppr:4:node python x.py")
    assert (p.nnodes, p.nproc_per_node) == (2, 4)
    p = plan("mpirun -np 8 --npernode 2 --host a,b,c,d python x.py")
    assert (p.nnodes, p.nproc_per_node, p.world_size) == (4, 2, 8)
    p = plan("mpiexec -n 8 -ppn 4 -hosts h1,h2 python x.py")
    assert (p.nnodes, p.nproc_per_node, p.world_size) == (2, 4, 8)


def test_mpirun_hostfile(tmp_path: Path) -> None:
    (tmp_path / "hosts").write_text("node1 slots=2\nnode2 slots=2\n")
    p = plan("mpirun --hostfile hosts python x.py", cwd=tmp_path)
    assert (p.nnodes, p.nproc_per_node, p.world_size) == (2, 2, 4)
    (tmp_path / "machines").write_text("node1:4\nnode2:4\n")
    p = plan("mpirun -machinefile machines -np 8 python x.py", cwd=tmp_path)
    assert (p.nnodes, p.nproc_per_node, p.world_size) == (2, 4, 8)
    p = plan("mpirun -hostfile nothere -np 8 python x.py", cwd=tmp_path)
    assert p.nnodes is None and p.world_size == 8 and diags(p, "unreadable-file")


def test_mpirun_unknown_np_and_no_np() -> None:
    p = plan("mpirun -np $NP python x.py")
    assert p.world_size is None and warned(p, "-np is $NP")
    p = plan("mpirun python x.py")
    assert p.world_size is None and warned(p, "CPU core")


def test_mpirun_nested_torch() -> None:
    p = plan("mpirun -np 2 -x CUDA_VISIBLE_DEVICES=0,1 python -m torch.distributed.run "
             "--nproc_per_node gpu train.py")
    assert p.launcher == "torchrun"
    assert p.world_size == 2 and p.visible_devices == 2
    assert any(d.code == "nested-launcher" and "mpirun" in d.message for d in p.diagnostics)


# -- srun --------------------------------------------------------------------------


def test_srun_counts() -> None:
    p = plan("srun -n 8 python train.py")
    assert p.launcher == "srun"
    assert p.world_size == 8 and p.nnodes is None and warned(p, "Slurm decides")
    assert target(p) == ("script", "train.py")
    p = plan("srun --nodes=2 --ntasks-per-node=4 python train.py")
    assert (p.nnodes, p.nproc_per_node, p.world_size) == (2, 4, 8)
    assert p.node_rank is None
    p = plan("srun -N2 -n8 python -u train.py")
    assert (p.nnodes, p.nproc_per_node, p.world_size) == (2, 4, 8)
    p = plan("srun --ntasks 4 --nodes 1 python x.py")
    assert numbers(p) == (1, 0, 4, 4)
    p = plan("srun -N 4 hostname")
    assert (p.nnodes, p.nproc_per_node, p.world_size) == (4, 1, 4)
    assert target(p) == ("cli", "hostname")
    p = plan("srun python x.py")
    assert numbers(p) == (1, 0, 1, 1)


def test_srun_options_between() -> None:
    p = plan("srun -p gpu --job-name=train --gres=gpu:8 --ntasks=16 --ntasks-per-node=8 "
             "--cpus-per-task=5 --kill-on-bad-exit=1 -u python -u tools/train.py cfg.py")
    assert (p.nnodes, p.nproc_per_node, p.world_size) == (2, 8, 16)
    assert target(p) == ("script", "tools/train.py") and args(p) == ["cfg.py"]
    assert not diags(p, "unknown-flag")
    p = plan("srun --ntasks-per-n 2 --nodes 1 python x.py")  # getopt_long abbreviation
    assert p.world_size == 2
    p = plan("srun --ntask 2 python x.py")  # a prefix of --ntasks and --ntasks-per-*
    assert diags(p, "ambiguous-flag")


def test_srun_node_range() -> None:
    p = plan("srun -N 2-4 --ntasks-per-node 8 python x.py")
    assert p.nnodes is None and p.nnodes_range == (2, 4) and p.world_size is None


def test_srun_sbatch_defaults() -> None:
    sbatch = words("--nodes=4 --ntasks-per-node=2 --gres=gpu:2 -o out.log")
    p = plan("srun python x.py", sbatch=sbatch)
    assert (p.nnodes, p.nproc_per_node, p.world_size) == (4, 2, 8)
    p = plan("srun -N 1 python x.py", sbatch=sbatch)
    assert (p.nnodes, p.world_size) == (1, 2)
    p = plan("srun python x.py", env_of(SLURM_NTASKS="3", SLURM_NNODES="1"))
    assert p.world_size == 3


def test_srun_misspelt_flag_is_a_warning() -> None:
    p = plan("srun --ntasks-per-nodes=4 -N 1 python x.py")
    (d,) = diags(p, "unknown-flag")
    assert d.severity == "warning" and d.fix == "--ntasks-per-node"


def test_srun_nested_launchers() -> None:
    p = plan("srun --nodes 2 --ntasks-per-node 1 torchrun --nnodes 2 --nproc_per_node 8 "
             "--node_rank $SLURM_NODEID train.py")
    assert p.launcher == "torchrun"
    assert (p.nnodes, p.nproc_per_node, p.world_size) == (2, 8, 16)
    assert p.node_rank is None
    assert target(p) == ("script", "train.py") and p.entry_index == 12
    assert any(d.code == "nested-launcher" and "srun runs torchrun" in d.message
               for d in p.diagnostics)
    assert {o.name for o in p.options} >= {"nodes", "ntasks_per_node", "nproc_per_node"}
    p = plan("srun deepspeed --num_gpus 2 train.py")
    assert p.launcher == "deepspeed" and p.world_size == 2
    p = plan("srun env CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node gpu x.py")
    assert p.launcher == "torchrun" and p.world_size == 2


# -- colossalai --------------------------------------------------------------------


def test_colossalai() -> None:
    p = plan("colossalai run --nproc_per_node 4 train.py --config c.py")
    assert p.launcher == "colossalai"
    assert numbers(p) == (1, 0, 4, 4)
    assert target(p) == ("script", "train.py") and args(p) == ["--config", "c.py"]
    p = plan("colossalai run --nproc_per_node 8 --host h1,h2 --master_addr h1 train.py")
    assert (p.nnodes, p.world_size) == (2, 16) and p.node_rank is None
    p = plan("colossalai run --nproc_per_node 2 -m pkg.train --lr 1")
    assert target(p) == ("module", "pkg.train") and args(p) == ["--lr", "1"]
    assert not diags(p, "unknown-flag")
    p = plan("colossalai run train.py")
    assert p.nproc_per_node is None and diags(p, "missing-value")
    p = plan("colossalai run --nproc-per-node 2 train.py")
    assert diags(p, "unknown-flag")[0].fix == "--nproc_per_node"


def test_colossalai_hostfile(tmp_path: Path) -> None:
    (tmp_path / "hostfile").write_text("host1\nhost2\nhost3\n")
    p = plan("colossalai run --nproc_per_node 4 --hostfile hostfile train.py", cwd=tmp_path)
    assert (p.nnodes, p.world_size) == (3, 12)
    p = plan("colossalai run --nproc_per_node 4 --hostfile hostfile --include host1,host2 x.py",
             cwd=tmp_path)
    assert p.nnodes == 2
    p = plan("colossalai run --nproc_per_node 4 --hostfile hostfile --exclude host1 "
             "--num_nodes 1 x.py", cwd=tmp_path)
    assert p.nnodes == 1


# -- python ------------------------------------------------------------------------


@pytest.mark.parametrize(("command", "kind", "name", "index"), [
    ("python train.py --a 1", "script", "train.py", 1),
    ("python3 -u -B -X dev -W ignore train.py", "script", "train.py", 7),
    ("python3.11 -m pkg.main --x", "module", "pkg.main", 2),
    ("/usr/bin/python3 -OO script.py", "script", "script.py", 2),
    ("pythonw -uWignore x.py", "script", "x.py", 2),
    ("python -c print(1) a", "cli", "-c", 1),
    ("python -mpkg", "module", "pkg", 1),
])
def test_python_entries(command: str, kind: str, name: str, index: int) -> None:
    p = plan(command)
    assert p.launcher == "python"
    assert numbers(p) == (1, 0, 1, 1)
    assert target(p) == (kind, name)
    assert p.entry_index == index


def test_python_args_and_unknown_interpreter_path() -> None:
    p = plan("python -c print(1) a")
    assert args(p) == ["print(1)", "a"]
    argv = [Word((Part("$VENV", known=False), Part("/bin/python")), Span(0, 0, 0, 16),
                 "$VENV/bin/python"), Word.literal("x.py", Span(0, 17, 0, 21))]
    p = plan(argv)
    assert p.launcher == "python" and target(p) == ("script", "x.py")


def test_parse_python_helper() -> None:
    call = parse_python(words("python -X importtime -m a.b c"), 1)
    assert (call.kind, call.module, call.index, call.args_from) == ("module", "a.b", 4, 5)
    call = parse_python(words("python"), 1)
    assert call.kind is None


# -- ray / verl --------------------------------------------------------------------


def test_verl_main_ppo() -> None:
    p = plan("python3 -m verl.trainer.main_ppo data.train_files=x.parquet "
             "trainer.n_gpus_per_node=8 trainer.nnodes=2 trainer.logger=console")
    assert p.launcher == "ray"
    assert (p.nnodes, p.nproc_per_node, p.world_size) == (2, 8, 16)
    assert target(p) == ("module", "verl.trainer.main_ppo")
    assert args(p)[0] == "data.train_files=x.parquet" and len(args(p)) == 4
    assert p.entry_index == 2
    assert p.option("trainer.n_gpus_per_node") is not None


def test_verl_defaults_and_unknowns() -> None:
    p = plan("python3 -m verl.trainer.main_ppo +trainer.n_gpus_per_node=4")
    assert numbers(p) == (1, 0, 4, 4)
    p = plan("python3 -m verl.trainer.main_ppo trainer.nnodes=1")
    assert p.nproc_per_node is None and p.world_size is None
    assert warned(p, "trainer.n_gpus_per_node")
    p = plan("python3 -m verl.trainer.main_ppo trainer.n_gpus_per_node=$GPUS")
    assert p.world_size is None and warned(p, "$GPUS")


def test_ray_job_submit() -> None:
    p = plan("ray job submit --address http://127.0.0.1:8265 --runtime-env-json {} --no-wait -- "
             "python3 -m verl.trainer.main_ppo trainer.n_gpus_per_node=2 trainer.nnodes=1")
    assert p.launcher == "ray" and p.world_size == 2
    assert target(p) == ("module", "verl.trainer.main_ppo")
    p = plan("ray job submit -- python train.py")
    assert p.launcher == "ray" and target(p) == ("script", "train.py")
    assert p.world_size is None


# -- other -------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["echo hi", "pip install -e .", "bash other.sh",
                                     "ray start --head", "accelerate config"])
def test_other(command: str) -> None:
    p = plan(command)
    assert p.launcher == "other"
    assert target(p) == ("cli", command.split(maxsplit=1)[0])
    assert numbers(p) == (None, None, None, None)
    assert p.warnings == []


def test_other_unknown_command() -> None:
    p = plan("$LAUNCHER train.py")
    assert p.launcher == "other" and diags(p, "unknown-command")
    p = plan(words(""))
    assert p.launcher == "other" and p.entry is None


# -- registry and helpers ------------------------------------------------------------


def test_modules_and_specs() -> None:
    names = [m.NAME for m in MODULES]
    assert names.index("torchrun") < names.index("python")
    assert names[-1] == "python"
    spec = spec_for("torchrun")
    assert spec is not None and "--nproc-per-node" in spec.spellings
    assert spec_for("other") is None
    found = find_launcher(words("nohup torchrun x.py"), 1)
    assert found is not None and found[0].NAME == "torchrun" and found[1] == 2
    specs = {"torchrun", "torch.distributed.launch", "deepspeed", "accelerate", "msrun",
             "colossalai", "mpirun", "srun", "horovodrun", "xla_spawn",
             "tune", "axolotl", "composer", "fabric", "detectron2"}
    assert {name for name in launcher_table.NAMES if spec_for(name) is not None} == specs


def test_launcher_names_are_the_tables() -> None:
    assert {m.NAME for m in MODULES} | {launcher_table.OTHER} == set(launcher_table.NAMES)
    assert {m.NAME for m in RANK_MODULES} == launcher_table.RANK_LAUNCHERS


# Words a program needs after it to be a launch (`accelerate launch`, `ray job submit`).
_SUBCOMMAND = {"accelerate": "launch ", "colossalai": "run ", "ray": "job submit ",
               "tune": "run ", "xtuner": "train ", "swift": "sft ", "axolotl": "train ",
               "fabric": "run "}
# Programs whose launch words differ from their launcher's (`lightning run model`).
_PROGRAM_SUBCOMMAND = {"accelerate-launch": "", "lightning": "run model "}
# Words after `python -m MODULE` (torchtune's run; the CLIs' subcommands).
_MODULE_SUBCOMMAND = {"tune": "run ", "swift": "sft ", "axolotl": "train "}


@pytest.mark.parametrize("row", launcher_table.TABLE, ids=lambda row: row.name)
def test_every_program_and_module_of_the_table_is_its_launcher(row: launcher_table.Launcher
                                                                ) -> None:
    for program in row.programs:
        sub = _PROGRAM_SUBCOMMAND.get(program, _SUBCOMMAND.get(row.name, ""))
        found = find_launcher(words(f"/usr/bin/{program} {sub}x.py"), 0)
        assert found is not None and row.name == found[0].NAME, program
    for module in row.modules:
        sub = "launch " if module.endswith("accelerate_cli") else (
            _MODULE_SUBCOMMAND.get(row.name, ""))
        found = find_launcher(words(f"python3 -m {module} {sub}x.py"), 0)
        assert found is not None and row.name == found[0].NAME, module


@pytest.mark.parametrize(("value", "count"), [
    ("0,1,2", 3), ("", 0), ("-1", 0), ("0,1,-1,2", 2), ("GPU-abc,GPU-def", 2), ("all", None),
    ("none", 0),
])
def test_count_visible(value: str, count: int | None) -> None:
    assert count_visible(value) == count


def test_split_last() -> None:
    parts = split_last(Word.literal("[::1]:29500"), ":")
    assert parts is not None and (parts[0].value, parts[1].value) == ("[::1]", "29500")
    assert split_last(Word.unknown("$EP", Span.point(0, 0), "unset"), ":") is None


def test_plan_all_lists_every_launcher_program() -> None:
    programs = [p for row in launcher_table.TABLE for p in row.programs]
    text = "".join(
        f"{p} {_PROGRAM_SUBCOMMAND.get(p, _SUBCOMMAND.get(launcher_table.PROCESS_WORDS[p], ''))}"
        "x.py\n" for p in programs if p != "accelerate-launch")
    plans, _ = plan_all(text)
    assert len(plans) == len(programs) - 1


# -- the hosts a command spreads over (``LaunchPlan.hosts``: launch --hosts by default) ---


def test_hosts_of_mpirun_srun_and_deepspeed(tmp_path: Path) -> None:
    assert plan("mpirun -np 4 -H a:2,b:2 python x.py").hosts == ["a", "b"]
    assert plan("mpirun -np 2 python x.py").hosts is None
    (tmp_path / "hostfile").write_text("w1 slots=4\nw2 slots=4\n")
    assert plan("mpirun --hostfile hostfile python x.py", cwd=tmp_path).hosts == ["w1", "w2"]
    assert plan("deepspeed --hostfile hostfile t.py", cwd=tmp_path).hosts == ["w1", "w2"]
    assert plan("srun -N 2 -w gpu[07-08] python x.py").hosts == ["gpu07", "gpu08"]
    # Inside an allocation its node list says where srun runs.
    p = plan("srun -N 2 -n 4 python x.py", env_of(SLURM_JOB_NODELIST="n[1-2],m3"))
    assert p.hosts == ["n1", "n2", "m3"]
    assert p.to_json()["hosts"] == ["n1", "n2", "m3"]
    assert plan("srun -N 2 -w ./nodes.txt python x.py").hosts is None


# -- torchtune's tune run ------------------------------------------------------------


def test_tune_run_with_torchrun_options_is_torchrun() -> None:
    p = plan("tune run --nnodes 2 --nproc_per_node 8 full_finetune_distributed "
             "--config llama3_1/70B_full batch_size=2")
    assert p.launcher == "tune" and numbers(p) == (2, 0, 8, 16) and not p.in_launcher
    assert target(p) == ("cli", "full_finetune_distributed")  # torchtune's, by name
    assert args(p) == ["--config", "llama3_1/70B_full", "batch_size=2"]
    # torchrun's spellings, abbreviations and PET_* variables.
    p = plan("python -m torchtune._cli.tune run --nproc-per-node=2 recipes/mine.py --config c")
    assert (p.launcher, p.world_size, target(p)) == ("tune", 2, ("script", "recipes/mine.py"))
    p = plan("tune run --standalone lora_finetune_distributed --config c",
             env_of(PET_NPROC_PER_NODE="4"))
    assert numbers(p) == (1, 0, 4, 4)


def test_tune_run_without_torchrun_options_runs_the_recipe_in_itself() -> None:
    p = plan("tune run lora_finetune_single_device --config llama3_1/8B_lora_single_device")
    assert p.launcher == "tune" and numbers(p) == (1, 0, 1, 1) and p.in_launcher
    assert p.to_json()["in_launcher"] is True
    assert not p.diagnostics


def test_tune_run_errors_and_other_subcommands() -> None:
    p = plan("tune run full_finetune_distributed")  # torchtune refuses it
    assert [d.severity for d in diags(p, "missing-config")] == ["error"]
    p = plan("tune run")
    assert p.launcher == "tune" and p.entry is None and diags(p, "missing-entry")
    # A config given through a variable may hold --config: no error then.
    assert not diags(plan("tune run r $ARGS", shell_vars={}), "missing-config")
    for other in ("tune download meta-llama/Llama-3.1-8B", "tune ls", "tune cp a b"):
        assert plan(other).launcher == "other", other


def test_one_rule_names_a_python_for_the_reader_the_scan_and_the_probe() -> None:
    """``launcher_table.is_python_name``: what the command reader, the /proc scan and the
    smoke probe each take for an interpreter (they had three rules that disagreed)."""
    from rankdebug.jobs import procfs
    from rankdebug.smoke import probe

    yes = ["python", "python3", "python3.11", "python3.13t", "python3.11d", "python3m",
           "pythonw", "pypy", "pypy3", "pypy3.10"]
    no = ["ipython", "python3.11-config", "pythonx", "py", "python3.", "jython", "cpython"]
    assert [n for n in yes if not launcher_table.is_python_name(n)] == []
    assert [n for n in no if launcher_table.is_python_name(n)] == []
    assert procfs.is_python_argv0(b"/usr/bin/python3.13t\0train.py")
    assert not procfs.is_python_argv0(b"/usr/bin/ipython\0")
    assert probe.is_python("/opt/pypy3/bin/pypy3") and not probe.is_python("/usr/bin/bash")
    assert launcher_table.LAUNCH_PROGRAM.fullmatch("pypy3")

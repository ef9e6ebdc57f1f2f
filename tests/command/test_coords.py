"""Parallel coordinates read from commands before anything runs (rankdebug.command.coords), on
public scripts and configs copied verbatim into coords_data/ (each file names its repository, path
and commit), checked against the frameworks' own rank arithmetic."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rankdebug.command import LaunchPlan, plan_argv, plan_file, plan_text
from rankdebug.command.coords import Layout
from rankdebug.debugplan import choose
from rankdebug.ranks import RanksError

DATA = Path(__file__).resolve().parent / "coords_data"


def _line(path: Path, starts: str) -> int:
    return next(n for n, text in enumerate(path.read_text().splitlines(), 1)
                if text.lstrip().startswith(starts))


def _layout(plan: LaunchPlan) -> Layout:
    layout = plan.coords
    assert layout is not None, plan.warnings
    return layout


def _megatron_rank(rank: int, tp: int, cp: int, dp: int) -> dict[str, int]:
    """Megatron's RankGenerator with order tp-cp-ep-dp-pp, as its docstring writes it:
    global_rank = tp_rank + cp_rank*tp + dp_rank*tp*cp + pp_rank*tp*cp*dp."""
    return {"tp": rank % tp, "cp": rank // tp % cp, "dp": rank // (tp * cp) % dp,
            "pp": rank // (tp * cp * dp)}


# ---- Megatron-LM ------------------------------------------------------------------------


def test_megatron_gpt3_175b_as_published_cannot_fit_one_node() -> None:
    # tp 8 x pp 16 = 128 ranks, with NUM_NODES=1 and 8 GPUs: Megatron stops at start-up.
    script = DATA / "megatron_gpt3_175b.sh"
    plan = plan_file(script, _line(script, "torchrun"), cwd=DATA)
    assert plan.world_size == 8 and plan.coords is None
    said = [d for d in plan.diagnostics if d.code == "parallel-sizes"]
    assert len(said) == 1
    assert "'world_size (8) is not divisible by 128'" in said[0].message


def test_megatron_gpt3_175b_on_16_nodes() -> None:
    script = DATA / "megatron_gpt3_175b.sh"
    text = script.read_text().replace("NUM_NODES=1", "NUM_NODES=16")
    plan = plan_text(text, _line(script, "torchrun"), path=str(script), cwd=DATA)
    layout = _layout(plan)
    assert plan.world_size == 128
    assert layout.sizes == {"tp": 8, "dp": 1, "pp": 16}
    assert layout.order == ("tp", "cp", "dp", "pp") and layout.source == "megatron"
    for rank in (0, 7, 8, 63, 127):
        want = _megatron_rank(rank, 8, 1, 1)
        del want["cp"]
        assert layout.coords_of(rank) == want
    # Where each size was read: the array's expansion in the command, with its value.
    reads = {r.name: (r.value, r.line) for r in layout.read}
    lines = script.read_text().splitlines()
    assert reads["--tensor-model-parallel-size"][0] == "8"
    assert reads["--pipeline-model-parallel-size"][0] == "16"
    assert "${MODEL_PARALLEL_ARGS[@]}" in lines[reads["--tensor-model-parallel-size"][1] - 1]


def test_megatron_mixtral_experts_sit_on_their_own_grid() -> None:
    # tp 1, pp 4, ep 8 (examples/mixtral): 8 GPUs x SLURM_NNODES nodes.
    script = DATA / "megatron_mixtral_8x7b.sh"
    line = _line(script, "torchrun")
    one_node = plan_file(script, line, cwd=DATA, caller_env={"SLURM_NNODES": "1"},
                         env_complete=False)
    assert one_node.coords is None
    assert any("expert tensor × expert × pipeline parallel size (32)" in w
               for w in one_node.warnings)
    plan = plan_file(script, line, cwd=DATA, caller_env={"SLURM_NNODES": "4"},
                     env_complete=False)
    layout = _layout(plan)
    assert plan.world_size == 32
    assert layout.sizes == {"tp": 1, "dp": 8, "pp": 4, "ep": 8}
    # Expert grid tp-ep-dp-pp with etp = tp = 1: ep is rank % 8; dense dp is rank // 1 % 8.
    assert [layout.coords_of(r)["ep"] for r in (0, 5, 8, 13, 31)] == [0, 5, 0, 5, 7]
    assert layout.coords_of(13) == {"tp": 0, "dp": 5, "pp": 1, "ep": 5}


def test_megatron_flags_as_argparse_reads_them() -> None:
    plan = plan_argv(["torchrun", "--nproc_per_node", "16", "pretrain_gpt.py",
                      "--tensor-model-parallel-size=2", "--context-parallel-size", "2",
                      "--pipeline_model_parallel_size", "2", "--tensor-model-parallel-size",
                      "4", "--use-tp-pp-dp-mapping"], cwd=DATA)
    layout = _layout(plan)
    # The last --tensor-model-parallel-size wins; tp-cp-pp-dp with the mapping flag.
    assert layout.sizes == {"tp": 4, "cp": 2, "pp": 2, "dp": 1}
    assert layout.order == ("tp", "cp", "pp", "dp")
    assert layout.coords_of(13) == {"tp": 1, "cp": 1, "pp": 1, "dp": 0}
    # A size that is not known here ($TP unset) is no guess at all.
    unknown = plan_text("torchrun --nproc_per_node 8 pretrain_gpt.py "
                        "--tensor-model-parallel-size $TP\n", 1, cwd=DATA)
    assert unknown.coords is None
    # Megatron has allow_abbrev=False: an abbreviation is not its flag.
    abbreviated = plan_argv(["torchrun", "--nproc_per_node", "8", "pretrain_gpt.py",
                             "--tensor-model-parallel", "2"], cwd=DATA)
    assert abbreviated.coords is None


def test_mindspeed_deepseek2_lite_8p() -> None:
    # Ascend/MindSpeed-LLM's script (kept in the command corpus): TP=1 PP=1 EP=8 on 8 NPUs.
    script = DATA.parent.parent / "corpus" / "mindspeed_pretrain_deepseek2_lite_8p.sh"
    plan = plan_file(script, _line(script, "python -m torch.distributed.launch"),
                     cwd=script.parent)
    layout = _layout(plan)
    assert layout.sizes == {"tp": 1, "dp": 8, "pp": 1, "ep": 8}
    assert [layout.coords_of(r)["ep"] for r in range(8)] == list(range(8))


# ---- torchtitan -------------------------------------------------------------------------


def _titan(toml: str, nproc: int, *extra: str) -> LaunchPlan:
    script = DATA / "torchtitan_run_train.sh"
    return plan_file(script, _line(script, "torchrun"), cwd=DATA, env_complete=False,
                     caller_env={"NGPU": str(nproc), "CONFIG_FILE": str(DATA / toml)},
                     ) if not extra else plan_argv(
        ["torchrun", f"--nproc_per_node={nproc}", "-m", "torchtitan.train",
         "--job.config_file", str(DATA / toml), *extra], cwd=DATA)


def test_torchtitan_llama3_8b_shards_every_rank() -> None:
    # data_parallel_shard_degree = -1: all that the other degrees leave.
    plan = _titan("torchtitan_llama3_8b.toml", 8)
    layout = _layout(plan)
    assert layout.source == "torchtitan"
    assert layout.sizes == {"tp": 1, "dp_shard": 8, "pp": 1, "dp": 8}
    assert layout.coords_of(5) == {"tp": 0, "dp_shard": 5, "pp": 0, "dp": 5}
    read = {r.name: r for r in layout.read}
    shard = read["[parallelism] data_parallel_shard_degree"]
    assert shard.value == "-1" and shard.file == str(DATA / "torchtitan_llama3_8b.toml")
    assert shard.line is not None
    assert "data_parallel_shard_degree = -1" in Path(shard.file).read_text().splitlines()[
        shard.line - 1]


def test_torchtitan_llama3_70b_tp8_over_64_ranks() -> None:
    layout = _layout(_titan("torchtitan_llama3_70b.toml", 64))
    assert layout.sizes == {"tp": 8, "dp_shard": 8, "pp": 1, "dp": 8}
    # Mesh ("pp", "dp_replicate", "dp_shard", "cp", "tp"): tp fastest.
    assert layout.coords_of(13) == {"tp": 5, "dp_shard": 1, "pp": 0, "dp": 1}


def test_torchtitan_overrides_win_over_the_toml() -> None:
    layout = _layout(_titan("torchtitan_llama3_70b.toml", 16,
                            "--parallelism.tensor_parallel_degree", "2",
                            "--parallelism.pipeline-parallel-degree=2",
                            "--parallelism.data_parallel_replicate_degree", "2"))
    assert layout.sizes == {"tp": 2, "dp_shard": 2, "dp_replicate": 2, "pp": 2, "dp": 4}
    # 13 = tp 1 + 2*(dp_shard 0) + 4*(dp_replicate 1) + 8*(pp 1)
    assert layout.coords_of(13) == {"tp": 1, "dp_shard": 0, "dp_replicate": 1, "pp": 1,
                                    "dp": 2}


def test_torchtitan_deepseek_v3_16b_experts() -> None:
    layout = _layout(_titan("torchtitan_deepseek_v3_16b.toml", 16))
    assert layout.sizes == {"tp": 1, "dp_shard": 16, "pp": 1, "dp": 16, "ep": 8}
    assert layout.coords_of(11)["ep"] == 3


def test_torchtitan_degrees_that_do_not_fit() -> None:
    plan = _titan("torchtitan_llama3_70b.toml", 12)  # tp 8 does not divide 12
    assert plan.coords is None
    assert any("Invalid parallel dims" in w for w in plan.warnings)


# ---- DeepSpeed, verl, accelerate ------------------------------------------------------


def _ds_workspace(tmp_path: Path) -> Path:
    for name in ("run.sh", "ds_config.json"):
        shutil.copy(DATA / "ds_pipeline" / name, tmp_path / name)
    shutil.copy(DATA / "ds_pipeline" / "train.py.txt", tmp_path / "train.py")
    return tmp_path / "run.sh"


def test_deepspeed_pipeline_example_reads_its_own_dash_p(tmp_path: Path) -> None:
    # run.sh: `deepspeed train.py --deepspeed_config=ds_config.json -p 2 --steps=200`;
    # train.py declares -p as --pipeline-parallel-size. The GPU count is this machine's, so
    # the test names it (CUDA_VISIBLE_DEVICES), as a user's environment would.
    script = _ds_workspace(tmp_path)
    plan = plan_file(script, _line(script, "deepspeed"), cwd=tmp_path, env_complete=False,
                     caller_env={"CUDA_VISIBLE_DEVICES": "0,1,2,3,4,5,6,7"})
    layout = _layout(plan)
    assert plan.world_size == 8 and layout.source == "deepspeed"
    # PipeDataParallelTopology: axes ['pipe', 'data'], data fastest.
    assert layout.sizes == {"dp": 4, "pp": 2}
    assert [layout.coords_of(r) for r in (0, 3, 4, 7)] == [
        {"dp": 0, "pp": 0}, {"dp": 3, "pp": 0}, {"dp": 0, "pp": 1}, {"dp": 3, "pp": 1}]
    # Without the script's own declaration, -p means nothing we know.
    (tmp_path / "train.py").write_text("import argparse\n")
    plain = plan_file(script, _line(script, "deepspeed"), cwd=tmp_path, env_complete=False,
                      caller_env={"CUDA_VISIBLE_DEVICES": "0,1,2,3,4,5,6,7"})
    assert _layout(plain).sizes == {"dp": 8}


def test_verl_rollout_mesh() -> None:
    script = DATA / "verl_grpo_qwen2_7b.sh"
    plan = plan_file(script, _line(script, "python3 -m verl"), cwd=DATA)
    layout = _layout(plan)
    assert plan.world_size == 8 and layout.source == "verl"
    # init_device_mesh((dp, infer_tp, infer_pp)): infer_tp = 2 is fastest here.
    assert layout.sizes == {"infer_tp": 2, "dp": 4}
    assert layout.coords_of(5) == {"infer_tp": 1, "dp": 2}
    (read,) = layout.read
    assert read.value == "2" and read.name.endswith("rollout.tensor_model_parallel_size")


def test_accelerate_fsdp_config(tmp_path: Path) -> None:
    (tmp_path / "fsdp.yaml").write_text("compute_environment: LOCAL_MACHINE\n"
                                        "distributed_type: FSDP\nnum_processes: 4\n")
    plan = plan_argv(["accelerate", "launch", "--config_file", "fsdp.yaml", "train.py"],
                     cwd=tmp_path)
    layout = _layout(plan)
    assert layout.sizes == {"fsdp": 4} and layout.read[0].line == 2
    multi = plan_argv(["accelerate", "launch", "--multi_gpu", "--num_processes", "2",
                       "train.py"], cwd=tmp_path)
    assert _layout(multi).sizes == {"dp": 2}


def test_plain_torchrun_has_no_layout() -> None:
    plan = plan_argv(["torchrun", "--nproc_per_node", "4", "train.py", "--lr", "1"], cwd=DATA)
    assert plan.coords is None and plan.to_json()["coords"] is None


# ---- the plan's JSON and the rank choice ------------------------------------------------


def _plan_cli(*argv: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "rankdebug", "plan", "--", *argv],
                          capture_output=True, text=True, timeout=60, check=False, cwd=DATA)
    out: dict[str, Any] = json.loads(done.stdout)
    return out


def test_plan_json_carries_the_layout_and_each_ranks_coordinates() -> None:
    command = "torchrun --nproc_per_node 4 pretrain_gpt.py --tensor-model-parallel-size 2"
    out = _plan_cli(*command.split())
    coords = out["coords"]
    assert coords["dims"] == {"tp": 2, "dp": 2, "pp": 1}
    assert coords["order"] == ["tp", "cp", "dp", "pp"] and coords["source"] == "megatron"
    assert coords["world_size"] == 4
    assert coords["read"] == [{"name": "--tensor-model-parallel-size", "value": "2",
                               "file": None, "line": 1, "column": len(command)}]
    assert coords["ranks"] == [{"tp": 0, "dp": 0, "pp": 0}, {"tp": 1, "dp": 0, "pp": 0},
                               {"tp": 0, "dp": 1, "pp": 0}, {"tp": 1, "dp": 1, "pp": 0}]
    # The contract's rank entries keep their shape.
    assert out["ranks"][3] == {"rank": 3, "node_rank": 0, "local_rank": 3}


def test_the_rank_choice_resolves_selectors_through_the_layout() -> None:
    plan = plan_argv(["torchrun", "--nproc_per_node", "8", "pretrain_gpt.py",
                      "--tensor-model-parallel-size", "2", "--pipeline-model-parallel-size",
                      "2"], cwd=DATA)
    assert choose("tp=0", plan).ranks == [0, 2, 4, 6]
    assert choose("pp=last tp=1", plan).ranks == [5, 7]
    assert choose("dp=0 and pp=0", plan).ranks == [0, 1]
    assert choose("0-2", plan).ranks == [0, 1, 2]
    with pytest.raises(RanksError, match="this job has tp, dp, pp"):
        choose("cp=0", plan)

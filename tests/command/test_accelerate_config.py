"""accelerate's configuration as accelerate itself reads it: the default config in the
Hugging Face home (HF_HOME, else XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface,
``~`` expanded with the command's HOME), ``--config_file``, the plan saying which file was
read, and distributed_type deciding between one process and one per device. The process
counts are checked against real ``accelerate launch`` runs on CPU."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rankdebug.command import plan_text

SIX = "num_machines: 1\nnum_processes: 6\ndistributed_type: MULTI_GPU\n"


def put(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def plan_with(env: dict[str, str], command: str, cwd: Path) -> tuple[object, ...]:
    p = plan_text(command + "\n", 1, caller_env=env, cwd=cwd)
    notes = [d.message for d in p.diagnostics if d.code in ("default-config", "config-file")]
    return p.nnodes, p.nproc_per_node, p.world_size, notes


@pytest.mark.parametrize(("env", "where"), [
    ({"HF_HOME": "{t}/hf"}, "hf/accelerate"),
    ({"HF_HOME": "~/hf", "HOME": "{t}"}, "hf/accelerate"),
    ({"XDG_CACHE_HOME": "{t}/xdg", "HOME": "{t}/nothere"}, "xdg/huggingface/accelerate"),
    ({"XDG_CACHE_HOME": "~/xdg", "HOME": "{t}"}, "xdg/huggingface/accelerate"),
    ({"HOME": "{t}"}, ".cache/huggingface/accelerate"),
])
def test_default_config_where_accelerate_looks(tmp_path: Path, env: dict[str, str],
                                                where: str) -> None:
    config = put(tmp_path / where / "default_config.yaml", SIX)
    real = {k: v.replace("{t}", str(tmp_path)) for k, v in env.items()}
    nnodes, per, world, notes = plan_with(real, "accelerate launch t.py", tmp_path)
    assert (nnodes, per, world) == (1, 6, 6)
    assert notes == [f"accelerate reads its default config {config} "
                     "(distributed_type MULTI_GPU, num_machines 1, num_processes 6)"]


def test_hf_home_set_hides_the_other_places(tmp_path: Path) -> None:
    put(tmp_path / ".cache/huggingface/accelerate/default_config.yaml", SIX)
    env = {"HOME": str(tmp_path), "HF_HOME": str(tmp_path / "empty")}
    assert plan_with(env, "accelerate launch t.py", tmp_path)[2:] == (None, [])
    # --cpu: accelerate does not read the default config at all.
    env = {"HOME": str(tmp_path)}
    assert plan_with(env, "accelerate launch --cpu t.py", tmp_path)[3] == []


def test_config_file_is_named_and_decides(tmp_path: Path) -> None:
    put(tmp_path / "ds.yaml", "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\n"
        "num_machines: 2\nnum_processes: 16\nmachine_rank: 1\n")
    p = plan_text("accelerate launch --config_file ds.yaml t.py\n", 1, cwd=tmp_path)
    assert (p.nnodes, p.nproc_per_node, p.world_size, p.node_rank) == (2, 8, 16, 1)
    (note,) = [d for d in p.diagnostics if d.code == "config-file"]
    assert note.message == ("accelerate reads the config ds.yaml (distributed_type DEEPSPEED, "
                            "num_machines 2, num_processes 16)")
    assert (note.span.start_col, note.span.end_col) == (32, 39)  # at the file's name


def test_num_processes_minus_one_is_refused(tmp_path: Path) -> None:
    put(tmp_path / "c.yaml", "distributed_type: MULTI_GPU\nnum_processes: -1\n")
    p = plan_text("accelerate launch --config_file c.yaml t.py\n", 1, cwd=tmp_path)
    errors = [d for d in p.diagnostics if d.severity == "error"]
    assert [d.message for d in errors] == [
        "num_processes is -1 in c.yaml: accelerate refuses to start without --num_processes"]
    p = plan_text("accelerate launch --config_file c.yaml --num_processes 2 t.py\n", 1,
                  cwd=tmp_path)
    assert p.world_size == 2 and not [d for d in p.diagnostics if d.severity == "error"]


# ---- against accelerate itself ----------------------------------------------------------

COUNT = """import os, sys
open(os.path.join(sys.argv[1], f"ran-{os.getpid()}"), "w").close()
"""


@pytest.mark.parametrize(("config", "extra", "expected"), [
    ("distributed_type: 'NO'\nnum_machines: 1\nnum_processes: 1\n", ["--num_processes", "3"], 1),
    ("distributed_type: MULTI_GPU\nnum_machines: 1\nnum_processes: 2\n", [], 2),
])
def test_the_plan_counts_what_accelerate_starts(tmp_path: Path, config: str,
                                                extra: list[str], expected: int) -> None:
    pytest.importorskip("accelerate")
    exe = shutil.which("accelerate", path=str(Path(sys.executable).parent))
    assert exe is not None
    put(tmp_path / "c.yaml", "compute_environment: LOCAL_MACHINE\nmixed_precision: 'no'\n"
        "dynamo_config: {}\ngpu_ids: all\nuse_cpu: true\nrdzv_backend: static\n" + config)
    put(tmp_path / "count.py", COUNT)
    (tmp_path / "out").mkdir()
    command = [exe, "launch", "--config_file", "c.yaml", *extra, "count.py", str(tmp_path / "out")]
    plan = plan_text(" ".join(command) + "\n", 1, cwd=tmp_path)
    assert plan.world_size == expected
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "ACCELERATE_"))}
    env["HF_HOME"] = str(tmp_path / "hf")  # no default config of the machine's
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(list((tmp_path / "out").iterdir())) == expected

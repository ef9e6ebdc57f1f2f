"""`rankdebug smoke` as the editor calls it: the JSON contract, the human form, errors in the
envelope with positions, and the private folder."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

from smoke_helpers import EXAMPLES, cli, digest, write

NANOGPT = EXAMPLES / "nanogpt"
HOOK = Path(__file__).resolve().parents[2] / "pyserver/rankdebug/runtime/smoke_hook.py"
RUN = ["torchrun", "--standalone", "--nproc_per_node", "8", "train.py", "config/char.py"]


def test_json_contract() -> None:
    done = cli("smoke", "--json", "--cwd", str(NANOGPT), "--", *RUN)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert {"argv", "env", "changes", "files"} <= set(out)
    assert out["argv"][:6] == ["torchrun", "--standalone", "--nproc_per_node", "2", "train.py",
                               "config/char.py"]
    assert all(isinstance(w, str) for w in out["argv"])
    # The run-time stop: the loop decides what max_iters counts (nanoGPT's makes one more).
    hook = out["hook"]
    assert out["env"]["RANKDEBUG_SMOKE_STEPS"] == "3" and hook["steps"] == 3
    assert out["env"]["PYTHONPATH"].split(os.pathsep)[0] == str(Path(hook["path"]).parent)
    assert Path(hook["path"]).read_text() == HOOK.read_text()
    assert set(out["env"]) == {"RANKDEBUG_SMOKE_STEPS", "PYTHONPATH"}
    for change in out["changes"]:
        assert set(change) == {"name", "from", "to", "why", "where"}
        assert change["why"] and change["where"]
    by_name = {c["name"]: c for c in out["changes"]}
    assert by_name["max_iters"] == {
        "name": "max_iters", "from": "5000", "to": "3",
        "why": "the loop's own limit; the run-time stop below holds the run to 3 optimizer "
               "steps", "where": "config/char.py: max_iters"}
    assert by_name["RANKDEBUG_SMOKE_STEPS"]["to"] == "3"
    assert out["not_applied"] == [] and out["gpu_uses"] == [] and out["cpu_change"] == []
    assert "--max_iters=3" in out["argv"]
    assert out["files"] == []
    assert out["command"].startswith("RANKDEBUG_SMOKE_STEPS=3 PYTHONPATH=")
    assert " torchrun --standalone --nproc_per_node 2 train.py " in out["command"]
    assert out["plan"]["from"]["world_size"] == 8 and out["plan"]["to"]["world_size"] == 2
    assert out["frameworks"] == ["nanogpt"] and out["missing"] == []
    # The command as written, for the left side of the editor's diff: untouched by the rewrite.
    assert out["original"] == {"argv": RUN, "env": {}}
    assert out["copies"] == []


def test_human_form_ends_with_the_command() -> None:
    done = cli("smoke", "--cwd", str(NANOGPT), "--steps", "5", "--nproc", "1", "--", *RUN)
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert lines[0] == "smoke run (nanogpt; launcher torchrun)"
    assert "  max_iters: 5000 -> 5    the loop's own limit; the run-time stop below holds " \
           "the run to 5 optimizer steps  [config/char.py: max_iters]" in lines
    assert lines[-1].startswith("RANKDEBUG_SMOKE_STEPS=5 PYTHONPATH=")
    assert " torchrun --standalone --nproc_per_node 1 train.py" in lines[-1]


def test_file_and_line(tmp_path: Path) -> None:
    script = write(tmp_path / "run.sh", """
        #!/bin/bash
        NGPU=8
        export OMP_NUM_THREADS=4
        torchrun --nproc_per_node $NGPU \\
            train.py config/char.py --batch_size=32
    """)
    done = cli("smoke", "--json", "--file", str(script), "--line", "5", "--cwd", str(NANOGPT))
    out = json.loads(done.stdout)
    assert out["env"]["OMP_NUM_THREADS"] == "4"
    assert out["argv"][:3] == ["torchrun", "--nproc_per_node", "2"]
    assert "--batch_size=1" in out["argv"]
    assert out["plan"]["span"] == {"start_line": 4, "end_line": 5, "start_column": 1,
                                   "end_column": 44}


def test_a_cd_in_the_script_is_where_the_command_runs(tmp_path: Path) -> None:
    shutil.copytree(NANOGPT, tmp_path / "sub")
    script = write(tmp_path / "run.sh", """
        cd sub
        torchrun --nproc_per_node 8 train.py config/char.py
    """)
    done = cli("smoke", "--json", "--file", str(script), "--line", "2", "--cwd", str(tmp_path))
    out = json.loads(done.stdout)
    assert out["plan"]["cwd"] == str(tmp_path / "sub")
    assert out["frameworks"] == ["nanogpt"] and "--max_iters=3" in out["argv"]


def test_bad_input_is_an_envelope_with_a_position(tmp_path: Path) -> None:
    cases = {
        ("--", "torchrun 'train.py"): ("unterminated single-quoted string", 1, 9),
        ("--", "torchrun", "--nproc_per_node", "train.py"): (
            "--nproc_per_node is given no value: train.py is read as its value, and torchrun "
            "is left no program to run", 1, 10),
        (): ("give either --file and --line, or a command after --", None, None),
        ("--file", "run.sh"): ("--file needs --line", None, None),
        ("--cwd", "nowhere", "--", "python", "t.py"): ("--cwd nowhere: no such folder",
                                                       None, None),
    }
    for args, (message, line, column) in cases.items():
        done = cli("smoke", "--json", *args, cwd=tmp_path)
        assert done.returncode == 2, args
        error = json.loads(done.stdout)["error"]
        assert (error["message"], error["line"], error["column"]) == (message, line, column)
        assert "Traceback" not in done.stderr
    plain = cli("smoke", "--", "torchrun 'x", cwd=tmp_path)
    assert plain.returncode == 2 and plain.stdout == ""
    assert plain.stderr.strip() == "rankdebug smoke: unterminated single-quoted string (line 1)"
    assert cli("smoke", "--steps", "0", "--", "python", "t.py").returncode == 2


def test_copies_are_private_and_the_users_files_untouched(tmp_path: Path,
                                                         runtime_dir: Path) -> None:
    write(tmp_path / "ds.json", '{"train_batch_size": 64, "train_micro_batch_size_per_gpu": 8}')
    before = digest(tmp_path)
    done = cli("smoke", "--json", "--cwd", str(tmp_path), "--", "deepspeed", "--num_gpus", "8",
               "train.py", "--deepspeed_config", "ds.json")
    out = json.loads(done.stdout)
    [copy] = out["files"]
    path = Path(copy)
    assert out["copies"] == [{"from": str(tmp_path / "ds.json"), "to": copy}]
    assert out["original"]["argv"][-1] == "ds.json" and out["argv"][-1] == copy
    assert path.parent.parent == runtime_dir / "rankdebug-smoke"
    for folder in (path.parent, path.parent.parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert digest(tmp_path) == before
    # The same command gets the same folder back (stable paths for the editor's diff).
    again = cli("smoke", "--json", "--cwd", str(tmp_path), "--", "deepspeed", "--num_gpus", "8",
                "train.py", "--deepspeed_config", "ds.json")
    assert json.loads(again.stdout)["files"] == [copy]


def test_a_planted_folder_is_refused(tmp_path: Path, runtime_dir: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, runtime_dir / "rankdebug-smoke")
    write(tmp_path / "ds.json", '{"train_batch_size": 64}')
    done = cli("smoke", "--json", "--cwd", str(tmp_path), "--", "deepspeed", "--num_gpus", "8",
               "train.py", "--deepspeed_config", "ds.json")
    assert done.returncode == 2
    assert "is not a folder of yours" in json.loads(done.stdout)["error"]["message"]
    assert list(elsewhere.iterdir()) == []

"""Never nothing, never silent: a readable command always gets a plan, and the slips a new
user makes are said at plan time, through the real ``rankdebug plan --json``, as
``rankdebug launch`` refuses them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rankdebug.command import CommandError, plan_all, plan_argv, plan_text
from rankdebug.command.incremental import DocumentPlans
from rankdebug.command.typos import meant, one_edit


def rankdebug(*args: str, cwd: Path, env: dict[str, str] | None = None
              ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rankdebug", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120, check=False,
                          env={**os.environ, **(env or {})})


def plan_cli(tmp_path: Path, *args: str) -> tuple[int, dict[str, Any]]:
    done = rankdebug("plan", "--json", *args, cwd=tmp_path)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)


def codes(out: dict[str, Any]) -> list[str]:
    return [d["code"] for d in out["diagnostics"]]


# ---- an option whose value is missing ------------------------------------------------


def test_count_left_out_is_said_at_the_option(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("")
    rc, out = plan_cli(tmp_path, "--", "torchrun", "--nproc_per_node", "train.py")
    assert rc == 2
    assert out["launcher"] == "torchrun" and out["entry"] is None
    (diag,) = out["diagnostics"]  # one finding, not a word about devices as well
    assert diag["code"] == "missing-value" and diag["severity"] == "error"
    assert diag["message"] == ("--nproc_per_node is given no value: train.py is read as its "
                               "value, and torchrun is left no program to run")
    assert (diag["line"], diag["column"]) == (1, 10)
    assert out["error"]["code"] == "missing-value"
    assert out["options"][0]["value"] is None


@pytest.mark.parametrize(("command", "flag"), [
    ("deepspeed --num_gpus train.py", "--num_gpus"),
    ("accelerate launch --num_processes train.py", "--num_processes"),
    ("python -m torch.distributed.launch --nproc_per_node train.py", "--nproc_per_node"),
    ("torchrun --nnodes 2 --node_rank run.sh", "--node_rank"),
])
def test_other_argparse_launchers(command: str, flag: str) -> None:
    plan = plan_argv(command.split())
    errors = [d for d in plan.diagnostics if d.severity == "error"]
    assert [d.code for d in errors] == ["missing-value"]
    assert errors[0].message.startswith(f"{flag} is given no value")
    assert not [d for d in plan.diagnostics if d.code == "missing-entry"]


def test_an_option_where_the_value_should_be() -> None:
    # argparse: "argument --nproc_per_node: expected one argument".
    plan = plan_argv(["torchrun", "--nproc_per_node", "--nnodes", "2", "train.py"])
    (diag,) = [d for d in plan.diagnostics if d.severity == "error"]
    assert diag.code == "missing-value"
    assert "the next word, --nnodes, is an option" in diag.message
    assert plan.nnodes == 2 and plan.entry is not None and plan.entry.target.value == "train.py"


def test_values_that_are_values_stay() -> None:
    plan = plan_argv(["torchrun", "--nproc_per_node", "4", "train.py"])
    assert plan.world_size == 4
    assert [d.code for d in plan.diagnostics] in ([], ["missing-script"])
    # A getopt tool (srun) takes the next word whatever it is; a negative number is a value.
    assert not [d for d in plan_argv(["srun", "-J", "-x", "python", "t.py"]).diagnostics
                if d.code == "missing-value"]
    # axolotl's --launcher python: "python" is the value.
    plan = plan_argv(["axolotl", "train", "c.yml", "--launcher", "python"])
    assert not [d for d in plan.diagnostics if d.code == "missing-value"]


def test_nproc_that_is_no_count_is_an_error() -> None:
    plan = plan_argv(["torchrun", "--nproc_per_node", "model.yaml", "train.py"])
    (diag,) = [d for d in plan.diagnostics if d.severity == "error"]
    assert diag.code == "bad-value" and "is not a count" in diag.message
    # A device kind torch may know (a PrivateUse1 backend) is not known here: a warning.
    plan = plan_argv(["torchrun", "--nproc_per_node", "npu", "/bin/sh"])
    assert [(d.severity, d.code) for d in plan.diagnostics] == [("warning", "unknown-value")]


# ---- a launcher's name misspelt ------------------------------------------------------


def test_one_edit() -> None:
    assert one_edit("torchrn", "torchrun") and one_edit("deepspeeed", "deepspeed")
    assert one_edit("torhcrun", "torchrun") and one_edit("torchrum", "torchrun")
    assert not one_edit("torchrun", "torchrun") and not one_edit("trchrn", "torchrun")
    assert meant("acclerate") == "accelerate" and meant("pyhton") == "python"
    assert meant("shift") is None  # one from swift, but bash's own
    assert meant("srn") is None  # short names are one slip from too much


@pytest.mark.parametrize(("name", "best"), [("torchrn", "torchrun"),
                                            ("deepspeeed", "deepspeed"),
                                            ("acclerate", "accelerate")])
def test_misspelt_launcher_through_the_cli(tmp_path: Path, name: str, best: str) -> None:
    (tmp_path / "run.sh").write_text(f"# train\n{name} launch train.py\n")
    rc, out = plan_cli(tmp_path, "--file", "run.sh", "--line", "2")
    assert rc == 2
    assert out["error"]["message"] == f"{name}: no such program; did you mean {best}?"
    (diag,) = [d for d in out["diagnostics"] if d["code"] == "unknown-launcher"]
    assert diag["fix"] == best
    assert (diag["line"], diag["column"], diag["end_column"]) == (2, 1, 1 + len(name))


def test_a_real_program_or_function_with_a_near_name_is_left_alone(tmp_path: Path) -> None:
    tool = tmp_path / "bin" / "torchrn"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    plan = plan_text("torchrn x\n", 1, caller_env={"PATH": str(tool.parent)})
    assert plan.diagnostics == []
    plan = plan_text("torchrn() { echo; }\ntorchrn x\n", 2, caller_env={"PATH": "/nowhere"})
    assert plan.diagnostics == []
    _, diags = plan_all("shift\nswift sft x\n")
    assert not [d for d in diags if d.code == "unknown-launcher"]


def test_misspelt_launcher_is_a_document_diagnostic() -> None:
    text = "echo start\ntorchrn --nproc_per_node 2 train.py\n"
    for plans, diags in (plan_all(text), DocumentPlans().update(text)):
        assert plans == []
        (diag,) = diags
        assert diag.code == "unknown-launcher" and diag.span.start_line == 1


# ---- an entry script that does not exist ---------------------------------------------


def test_missing_entry_script_is_said_at_plan_time(tmp_path: Path) -> None:
    rc, out = plan_cli(tmp_path, "--", "torchrun", "--nproc_per_node", "2", "trian.py")
    assert rc == 0 and out["world_size"] == 2
    (diag,) = out["diagnostics"]
    assert diag["code"] == "missing-script" and diag["column"] == 29
    assert diag["message"] == (f"the entry script trian.py does not exist in {tmp_path}: "
                               "rankdebug launch will not start it")
    (tmp_path / "trian.py").write_text("")
    assert plan_cli(tmp_path, "--", "torchrun", "trian.py")[1]["diagnostics"] == []


def test_launch_refuses_what_plan_said(tmp_path: Path) -> None:
    for command in (["torchrn", "train.py"], ["torchrun", "--nproc_per_node", "train.py"]):
        done = rankdebug("launch", "--json", "--ranks", "0", "--", *command, cwd=tmp_path)
        assert done.returncode == 2, done.stdout + done.stderr
        plan = plan_argv(command, cwd=tmp_path)
        first = next(d for d in plan.diagnostics if d.severity == "error")
        assert json.loads(done.stdout.splitlines()[-1])["error"]["message"] == first.message


# ---- a broken tail does not lose the plan ----------------------------------------------


ARRAY_OPEN_AT_END = """\
export OMP_NUM_THREADS=1
torchrun --nproc_per_node 2 train.py --lr 1
EXTRA=(
  --seed 1 \\
"""


def test_array_left_open_at_the_end_keeps_the_plans_before_it(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("")
    (tmp_path / "run.sh").write_text(ARRAY_OPEN_AT_END)
    rc, out = plan_cli(tmp_path, "--file", "run.sh", "--line", "2")
    assert rc == 0
    assert out["launcher"] == "torchrun" and out["world_size"] == 2
    assert out["script_env"] == {"OMP_NUM_THREADS": "1"}
    (diag,) = out["diagnostics"]
    assert diag["code"] == "syntax" and (diag["line"], diag["column"]) == (3, 1)
    assert "syntax error near 'EXTRA=('" in diag["message"]
    # The broken line itself is the error, where it starts.
    rc, out = plan_cli(tmp_path, "--file", "run.sh", "--line", "4")
    assert rc == 2 and (out["error"]["line"], out["error"]["column"]) == (3, 1)
    # The assignment before is what it is, not a syntax error.
    with pytest.raises(CommandError, match="sets variables"):
        plan_text(ARRAY_OPEN_AT_END, 1)


def test_broken_tail_keeps_lenses_and_says_where() -> None:
    for plans, diags in (plan_all(ARRAY_OPEN_AT_END), DocumentPlans().update(ARRAY_OPEN_AT_END)):
        assert [(p.launcher, p.span.start_line) for p in plans] == [("torchrun", 1)]
        (diag,) = diags
        assert diag.code == "syntax" and diag.span.start_line == 2
        assert "line" not in diag.message  # the position says where


def test_a_command_on_the_broken_line_does_not_run() -> None:
    # bash reads a line whole: `torchrun ...; X=(` at the end runs nothing.
    with pytest.raises(CommandError):
        plan_text("torchrun --nproc_per_node 2 train.py; X=(\n", 1)
    with pytest.raises(CommandError, match=r"missing '\)' to close"):
        plan_text("echo a\ntorchrun --nproc_per_node 2 train.py; X=(\n", 2)


# ---- no repetition -----------------------------------------------------------------------


@pytest.mark.parametrize(("text", "line", "message"), [
    ("# a comment\n", 1, "this line is a comment"),
    ("echo a\n\n", 2, "this line is empty"),
    ("echo a\n", 3, "the document ends at line 1"),
])
def test_line_messages_name_the_line_once(tmp_path: Path, text: str, line: int,
                                          message: str) -> None:
    (tmp_path / "run.sh").write_text(text)
    done = rankdebug("plan", "--file", "run.sh", "--line", str(line), cwd=tmp_path)
    assert json.loads(done.stdout)["error"]["message"] == message
    done = rankdebug("launch", "--file", "run.sh", "--line", str(line), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == f"rankdebug launch: {message} (line {line})"

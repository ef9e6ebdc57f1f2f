"""Wrapper scripts followed with their arguments (``${@:N}`` slices), a wrapper that is not
there, and a last command continued by a backslash into the end of the file: each checked
against what bash itself runs (a stub ``torchrun`` on PATH prints its arguments)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rankdebug.command import plan_file

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")

STUB = "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done\n"


def _bash_argv(tmp: Path, script: Path) -> list[str]:
    """What the stub torchrun was given when bash ran ``script``."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    stub = bin_dir / "torchrun"
    stub.write_text(STUB)
    stub.chmod(0o755)
    done = subprocess.run(["bash", str(script)], cwd=tmp, capture_output=True, text=True,
                          timeout=60, check=False,
                          env={**os.environ, "PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin"})
    return done.stdout.splitlines()


def _planned(tmp: Path, script: Path, line: int) -> list[str | None]:
    plan = plan_file(script, line, cwd=tmp, caller_env={}, env_complete=True)
    assert plan.launcher == "torchrun", plan.diagnostics
    return [w.value for w in plan.argv[1:]]


@pytest.mark.parametrize("ending", ["\\", "\\\n", "\\\\\\"])
def test_a_last_line_continued_into_the_end_of_the_file_is_a_command(
        tmp_path: Path, ending: str) -> None:
    script = tmp_path / "run.sh"
    script.write_bytes(("ARGS=(\n  --lr 0.1 \\\n)\n"
                        f"torchrun --nproc_per_node 2 train.py \"${{ARGS[@]}}\" {ending}"
                        ).encode())
    assert _planned(tmp_path, script, 4) == _bash_argv(tmp_path, script)
    # (`\\\\\\`: an escaped backslash, then the one that continues the line.)


def test_an_escaped_backslash_at_the_end_is_an_argument(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("torchrun --nproc_per_node 2 train.py \\\\\n")
    assert _planned(tmp_path, script, 1) == _bash_argv(tmp_path, script)
    assert _planned(tmp_path, script, 1)[-1] == "\\"


@pytest.mark.parametrize("words", ['"${@:3}"', "${@:2:2}", '"${@: -1}"', '"${@:0:1}"',
                                   '"${A[@]:1}"', '"${A[@]: -2:1}"', '"${@:9}"'])
def test_slices_of_the_arguments_are_items(tmp_path: Path, words: str) -> None:
    (tmp_path / "wrap.sh").write_text(
        f"A=(a b c)\ntorchrun --nproc_per_node=2 train.py {words}\n")
    script = tmp_path / "run.sh"
    script.write_text("bash wrap.sh cfg.py 8 --seed 1 --deterministic\n")
    planned = plan_file(script, 1, cwd=tmp_path, caller_env={}, env_complete=True)
    assert planned.launcher == "torchrun"
    assert [w.value for w in planned.argv[1:]] == _bash_argv(tmp_path, script)


def test_a_missing_wrapper_is_named_and_launch_refuses_it(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "scripts").mkdir(parents=True)
    (project / "scripts" / "run.sh").write_text("torchrun --nproc_per_node 2 train.py\n")
    doc = project / "scripts" / "go.sh"
    doc.write_text("sh scripts/run.sh 8\n")
    plan = plan_file(doc, 1, cwd=tmp_path)  # run from the wrong folder
    (diag,) = [d for d in plan.diagnostics if d.code == "missing-wrapper"]
    assert diag.severity == "error" and (diag.span.start_col, diag.span.end_col) == (3, 17)
    assert diag.message.startswith(f"the wrapper script scripts/run.sh does not exist in "
                                   f"{tmp_path}")
    assert f"it is there from {project.resolve()}" in diag.message
    # From the right folder it is followed.
    assert plan_file(doc, 1, cwd=project).launcher == "torchrun"
    done = subprocess.run([sys.executable, "-m", "rankdebug", "launch", "--file", str(doc),
                           "--line", "1"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "the wrapper script scripts/run.sh does not exist" in done.stderr
    assert "(line 1" in done.stderr and done.stderr.count("line 1") == 1


def test_a_wrapper_missing_from_a_followed_script_is_found_beside_it(tmp_path: Path) -> None:
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "dist.sh").write_text("torchrun --nproc_per_node 2 train.py\n")
    (tmp_path / "scripts" / "run.sh").write_text("bash dist.sh\n")  # bash looks in the cwd
    doc = tmp_path / "go.sh"
    doc.write_text("bash scripts/run.sh\n")
    plan = plan_file(doc, 1, cwd=tmp_path)
    (diag,) = [d for d in plan.diagnostics if d.code == "missing-wrapper"]
    assert f"it is there from {(tmp_path / 'scripts').resolve()}" in diag.message


def test_a_followed_commands_own_assignments_reach_the_job(tmp_path: Path) -> None:
    (tmp_path / "job.py").write_text(
        "import os, pathlib\npathlib.Path('seen.txt').write_text(os.environ['MARK'])\n")
    (tmp_path / "wrap.sh").write_text('MARK="$1-inner" python job.py\n')
    outer = tmp_path / "outer.sh"
    outer.write_text("bash wrap.sh a\n")
    plan = plan_file(outer, 1, cwd=tmp_path)
    assert plan.followed == "wrap.sh:1" and plan.env["MARK"].value == "a-inner"
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}"
           + os.environ.get("PATH", "")}
    done = subprocess.run([sys.executable, "-m", "rankdebug", "launch", "--no-wait", "--file",
                           str(outer), "--line", "1"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, check=False, env=env)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "seen.txt").read_text() == "a-inner"

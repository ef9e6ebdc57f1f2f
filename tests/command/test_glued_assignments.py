"""``A=1 B=2`` on a line of its own, then a command: bash sets the variables, then runs the
command. tree-sitter-bash reads the two as one command with an inline prefix (a known
misreading of its grammar), and did so only in some contexts, so the same command planned
as ``srun python -u $TRAINING_CMD`` with the variable unknown, or as the script it names,
depending on the lines above it; incremental and full planning then disagreed."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from rankdebug.command import plan_all
from rankdebug.command.incremental import DocumentPlans

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


@pytest.mark.parametrize("above", ["", "echo hi\n", "B=1\n"])
def test_assignments_on_their_own_line_are_shell_variables(above: str) -> None:
    src = above + 'CMD="train.py -s horovod" N=$((N+1))\n\nsrun python -u $CMD\n'
    (plan,), _ = plan_all(src, cwd=CORPUS)
    got = plan.to_json()
    assert got["argv"] == ["srun", "python", "-u", "train.py", "-s", "horovod"]
    assert got["env"] == {}  # not the command's own environment
    assert got["span"]["start_line"] == got["span"]["end_line"] == above.count("\n") + 3
    # what bash makes of it
    out = subprocess.run(["bash", "-c", src.replace("srun python -u", "printf '%s|'")],
                         capture_output=True, text=True, check=True).stdout
    assert out.endswith("train.py|-s|horovod|")


@pytest.mark.parametrize("src", ["A=1 B=2 torchrun t.py\n", "A=1 B=2 \\\n  torchrun t.py\n"])
def test_a_prefix_on_the_command_line_stays_its_environment(src: str) -> None:
    (plan,), _ = plan_all(src, cwd=CORPUS)
    assert plan.to_json()["env"] == {"A": "1", "B": "2"}
    assert plan.to_json()["span"]["start_line"] == 1


def test_incremental_equals_full_when_a_line_above_changes() -> None:
    """The case hypothesis found (tests/command/test_incremental.py)."""
    text = (CORPUS / "itwinai_srun_python_sbatch.sh").read_text()
    doc = DocumentPlans(cwd=CORPUS)
    doc.update(text)
    lines = text.split("\n")
    lines[19] += " N=$((N+1))"
    for text in ("\n".join(lines), "echo hi\n" + "\n".join(lines)):
        plans, _ = doc.update(text)
        assert [p.to_json() for p in plans] == [p.to_json() for p in plan_all(text, cwd=CORPUS)[0]]
        assert plans[0].to_json()["argv"][-3:] == ["train.py", "-s", "horovod"]

"""Commands as real repositories build them: in a variable run as `$CMD` or through `eval`,
as `bash -c CODE` (also under srun), with arguments gathered by `read <<EOF`, and with
`$(which X)` look-ups as the program."""

from __future__ import annotations

import os
from pathlib import Path

from rankdebug.command import plan_text
from rankdebug.command.plan import LaunchPlan


def shown(plan: LaunchPlan) -> list[str]:
    return [w.display for w in plan.argv]


def summary(plan: LaunchPlan) -> tuple[object, ...]:
    entry = (plan.entry.kind, plan.entry.target.display) if plan.entry else None
    return (plan.launcher, plan.nnodes, plan.nproc_per_node, plan.world_size, entry,
            [w.display for w in plan.entry_args])


# ---- a command held in a variable, run as `$CMD` ----------------------------------------


def test_unquoted_variable_as_the_command_splits_into_words() -> None:
    script = ('ARGS="--lr 1e-4 --epochs 3"\n'
              'CMD="torchrun --nproc_per_node 4 train.py ${ARGS}"\n'
              "$CMD\n")
    assert summary(plan_text(script, 3)) == (
        "torchrun", 1, 4, 4, ("script", "train.py"), ["--lr", "1e-4", "--epochs", "3"])


def test_variable_prefix_of_a_command() -> None:
    script = 'LAUNCH="torchrun --nproc_per_node=2"\nPY=python3\n$LAUNCH train.py\n$PY eval.py\n'
    assert summary(plan_text(script, 3))[:4] == ("torchrun", 1, 2, 2)
    assert summary(plan_text(script, 4)) == ("python", 1, 1, 1, ("script", "eval.py"), [])


def test_quotes_inside_a_variable_are_not_removed_by_splitting() -> None:
    # bash does not re-read quotes of an expansion: `'a` and `b'` are two words.
    script = "CMD=\"python train.py --name 'a b'\"\n$CMD\n"
    assert shown(plan_text(script, 2)) == ["python", "train.py", "--name", "'a", "b'"]


def test_empty_variable_before_the_command_leaves_the_command() -> None:
    script = 'PREFIX=""\n$PREFIX torchrun --nproc_per_node 2 train.py\n'
    assert summary(plan_text(script, 2))[:4] == ("torchrun", 1, 2, 2)


def test_unknown_variable_as_the_command_is_an_unknown_command() -> None:
    plan = plan_text("$LAUNCHER train.py\n", 1)
    assert plan.launcher == "other"
    assert any("LAUNCHER" in w for w in plan.warnings)


def test_function_called_through_a_variable_gets_its_arguments() -> None:
    script = ('run() {\n  torchrun --nproc_per_node "$1" train.py\n}\n'
              'STEP="run 8"\n$STEP\n')
    assert summary(plan_text(script, 2))[:4] == ("torchrun", 1, 8, 8)


# ---- $(which X) -------------------------------------------------------------------------


def test_which_names_the_program_when_the_path_is_not_known() -> None:
    plan = plan_text("$(which fairseq-train) data-bin --arch lstm\n", 1)
    assert summary(plan) == ("other", None, None, None, ("cli", "fairseq-train"),
                             ["data-bin", "--arch", "lstm"])
    assert plan.warnings == []
    for form in ("`which fairseq-train`", "$(command -v fairseq-train)",
                 "$(type -P fairseq-train)", '"$(which fairseq-train)"'):
        assert shown(plan_text(f"{form} data-bin\n", 1)) == ["fairseq-train", "data-bin"]


def test_which_finds_the_program_on_the_scripts_path(tmp_path: Path) -> None:
    tool = tmp_path / "fairseq-train"
    tool.write_text("#!/usr/bin/env python\n")
    tool.chmod(0o755)
    script = ("torchrun --nproc_per_node=8 $(which fairseq-train) data-bin\n"
              "$(which not-installed-anywhere) x\n")
    env = {"PATH": f"{tmp_path}{os.pathsep}/nonexistent"}
    plan = plan_text(script, 1, caller_env=env)
    # torchrun runs `python SCRIPT`: the script is the file `which` finds.
    assert summary(plan) == ("torchrun", 1, 8, 8, ("script", str(tool)), ["data-bin"])
    assert shown(plan_text(script, 2, caller_env=env))[0] == "not-installed-anywhere"


def test_which_with_options_or_several_names_is_not_read() -> None:
    for form in ("$(which -a python)", "$(which python python3)", "$(command python)"):
        plan = plan_text(f"{form} train.py\n", 1)
        assert not plan.argv[0].known, form

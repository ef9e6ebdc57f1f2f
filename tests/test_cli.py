"""The `rankdebug` command's dispatch."""

from __future__ import annotations

import json
import subprocess
import sys


def rankdebug(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rankdebug", *args], capture_output=True,
                          text=True, timeout=60, check=False)


def test_a_launcher_first_means_launch() -> None:
    # Rank 5 of a 2-rank job: launch's own validation answers, so nothing ran.
    out = rankdebug("--ranks", "5", "torchrun", "--nproc_per_node", "2", "x.py")
    assert out.returncode == 2
    assert "outside the job" in out.stdout + out.stderr


def test_a_mistyped_verb_is_an_error_not_a_command() -> None:
    out = rankdebug("plna", "--file", "x.sh")
    assert out.returncode == 2
    assert "invalid choice: 'plna'" in out.stderr
    assert "Traceback" not in out.stderr


def test_no_arguments_prints_usage() -> None:
    out = rankdebug()
    assert out.returncode == 2
    assert "VERB" in out.stdout + out.stderr


def test_version() -> None:
    out = rankdebug("--version")
    assert out.returncode == 0
    assert out.stdout.strip().startswith("rankdebug ")


def test_an_unknown_option_is_an_error_not_a_launch() -> None:
    out = rankdebug("--frobnicate", "torchrun", "x.py")
    assert out.returncode == 2
    assert "unknown option '--frobnicate'" in out.stderr
    assert "rankdebug launch" not in out.stderr


def test_help_is_for_users() -> None:
    out = rankdebug("--help")
    assert out.returncode == 0
    assert "Debug chosen ranks" in out.stdout and "rankdebug launch --ranks 1" in out.stdout
    assert "one sub-command per verb" not in out.stdout


def test_the_terminal_shim_knows_every_verb() -> None:
    """The VS Code terminal's `rankdebug` shim passes verbs through and runs anything else as
    a training command; its list (TypeScript) must be the CLI's, or `rankdebug jobs` typed
    in a terminal would become a launch."""
    import re
    from pathlib import Path

    from rankdebug.cli import _VERBS

    # Generated from _VERBS by scripts/gen_wire.py; shell.ts takes them from there.
    root = Path(__file__).resolve().parent.parent / "extension/src/core"
    assert "from './generated/verbs'" in (root / "shell.ts").read_text()
    found = re.search(r"export const CLI_VERBS = \[([^\]]*)\]",
                      (root / "generated/verbs.ts").read_text())
    assert found is not None, "CLI_VERBS not found in generated/verbs.ts"
    assert re.findall(r"'([a-z]+)'", found.group(1)) == list(_VERBS)


def test_plan_with_an_error_exits_2_and_still_prints_the_plan() -> None:
    out = subprocess.run([sys.executable, "-m", "rankdebug", "plan", "--", "torchrun",
                          "--nproc_per_node"], capture_output=True, text=True, timeout=60,
                         check=False)
    assert out.returncode == 2, out
    plan = json.loads(out.stdout)
    assert plan["launcher"] == "torchrun"
    assert plan["error"] == {"message": "--nproc_per_node needs a value", "line": 1,
                             "column": 10, "code": "missing-value"}
    fine = subprocess.run([sys.executable, "-m", "rankdebug", "plan", "--", "torchrun",
                           "--nproc_per_node", "2", "train.py"], capture_output=True,
                          text=True, timeout=60, check=False)
    assert fine.returncode == 0 and "error" not in json.loads(fine.stdout)


def test_the_verbs_that_plan_a_command_read_file_and_words_alike() -> None:
    """``plan``, ``launch`` and ``smoke`` take ``--file F --line N`` or ``-- COMMAND`` through
    one reading (``command.plan_args``): the same answer to the same mistake."""
    cases = {
        ("--file", "run.sh", "--", "torchrun", "t.py"):
            "give either --file/--line or a command, not both",
        ("--file", "run.sh"): "--file needs --line",
        (): "give either --file and --line, or a command after --",
    }
    for args, message in cases.items():
        for verb in ("plan", "launch", "smoke"):
            done = rankdebug(verb, "--json", *args) if verb != "plan" else rankdebug(verb, *args)
            assert done.returncode == 2, (verb, args, done.stderr)
            assert json.loads(done.stdout.splitlines()[0])["error"]["message"] == message, verb

"""The corpus against bash itself: corpus cases with a ``"bash"`` entry are run by real bash
with the launchers stubbed (``stubs.py``), and the command a stub was given must be the
command the engine planned, word for word, in the same working directory and with the same
inline environment.

    "bash": {"stub": "torchrun", "stubs": ["srun", "torchrun"], "env": {"SLURM_JOB_ID": "7"}}

``stub``: the program whose calls are compared (one must be the planned command);
``stubs``: every program to stub (default: just ``stub``); ``env``: variables the script
is run with (the job's, as Slurm would set them); ``prints``: what a stub writes to its
output (``{"hostname": "node-0"}``), for scripts that read it. The engine is given the very
environment bash ran with (stubs first on PATH), as the whole environment, so nothing is
unknown to it that bash knew.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import bash_stubs as stubs  # beside this file (pytest puts its folder on sys.path)
import pytest
import test_corpus

from rankdebug.command import plan_file
from rankdebug.command.sbatch import sbatch_directives, slurm_env

CORPUS = test_corpus.CORPUS
RUNNABLE = (".sh", ".sbatch", ".slurm")


def _cases() -> list[Any]:
    out = []
    for script, case, _source in test_corpus.CASES:  # the corpus as test_corpus reads it
        if "bash" in case:
            assert script.suffix in RUNNABLE, f"{script.name}: only shell scripts can be run"
            out.append(pytest.param(script.name, case, id=f"{script.name}:{case['line']}"))
    return out


CASES = _cases()


def test_some_cases_are_cross_checked() -> None:
    assert len(CASES) >= 10


def _base(word: str | None) -> str | None:
    return None if word is None else os.path.basename(word)


@pytest.mark.skipif(stubs.bash() is None, reason="bash is not installed")
@pytest.mark.parametrize(("name", "case"), CASES)
def test_bash_runs_what_the_engine_plans(name: str, case: dict[str, Any], tmp_path: Path
                                         ) -> None:
    work = tmp_path / "corpus"
    shutil.copytree(CORPUS, work, ignore=shutil.ignore_patterns("*.expect.json"))
    spec = case["bash"]
    stub = spec["stub"]
    script = work / name
    # Under sbatch the script sees the SLURM_* variables of its #SBATCH lines.
    env = {**stubs.stub_env(work),
           **slurm_env(sbatch_directives(script.read_text(encoding="utf-8"))),
           **spec.get("env", {})}
    calls = [c for c in stubs.run(script, spec.get("stubs", [stub]), work, env=env,
                                  prints=spec.get("prints")) if c.name == stub]
    assert calls, f"bash never ran {stub}"

    plan = plan_file(script, case["line"], cwd=work, caller_env=env, env_complete=True)
    words = [w.value for w in plan.argv]
    at = next((i for i, w in enumerate(words) if _base(w) == stub), None)
    assert at is not None, f"{stub} is not in the planned command {words}"
    planned = [stub, *words[at + 1:]]
    ran = [[c.name, *c.argv] for c in calls]
    # The planned command is one that bash ran (a script may run a launcher more than once,
    # with the same words: then the one run in the planned environment).
    same = [c for c, r in zip(calls, ran, strict=True) if _same(planned, r)]
    assert same, "\n".join(
        [f"engine planned: {planned}", *(f"bash ran:       {r}" for r in ran)])
    watched = {key: word.value for key, word in {**plan.script_env, **plan.env}.items()
               if key in stubs.WATCHED and word.value is not None}
    seen = next((c for c in same if all(c.env[k] == v for k, v in watched.items())), same[0])
    assert plan.cwd is not None and os.path.realpath(plan.cwd) == os.path.realpath(seen.cwd)
    for key, value in watched.items():
        assert seen.env[key] == value, key


def _same(planned: list[str | None], ran: list[str]) -> bool:
    """Word for word; a word the engine does not know matches any."""
    return len(planned) == len(ran) and all(
        p is None or p == r for p, r in zip(planned, ran, strict=True))

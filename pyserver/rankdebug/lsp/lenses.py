"""Code lenses above launch commands: ``▶ Debug · 4 ranks`` and ``Pick ranks…``.

Both run commands the extension defines, with ``[uri, line]`` as arguments (``line`` is
the 0-based line the command starts on, as in LSP positions). Commands that do not start
Python training (``python -m pip``, ``python -c``, ``python setup.py``...) get none.
"""

from __future__ import annotations

import posixpath

from lsprotocol import types

from rankdebug.command.plan import LaunchPlan

DEBUG_COMMAND = "rankdebug.debugCommand"
PICK_COMMAND = "rankdebug.pickRanks"

# `python -m X` that installs, serves, tests or formats: not training.
NOT_TRAINING_MODULES = frozenset({
    "pip", "ensurepip", "venv", "virtualenv", "pipx", "uv", "build", "twine", "wheel",
    "setuptools", "http.server", "json.tool", "pydoc", "site", "timeit", "zipfile", "tarfile",
    "pytest", "unittest", "doctest", "black", "ruff", "mypy", "isort", "flake8", "pylint",
    "pre_commit", "jupyter", "notebook", "jupyterlab", "ipykernel", "tensorboard",
    "torch.utils.collect_env", "spacy", "nltk", "huggingface_hub", "conda",
})
NOT_TRAINING_SCRIPTS = frozenset({"setup.py", "conftest.py"})


def is_training(plan: LaunchPlan) -> bool:
    """Whether a plan starts something worth debugging as a (possibly distributed) job."""
    if plan.launcher == "other":
        return False
    if plan.launcher != "python":
        return True
    entry = plan.entry
    if entry is None or entry.kind == "cli":  # `python`, `python -c ...`, `python -`
        return False
    target = entry.target.value
    if target is None:
        return True
    if entry.kind == "module":
        return target not in NOT_TRAINING_MODULES and target.split(".")[0] not in {
            "pip", "venv", "pytest", "jupyter",
        }
    return posixpath.basename(target) not in NOT_TRAINING_SCRIPTS


def rank_count(plan: LaunchPlan) -> int | None:
    """How many ranks the job has, when that is known."""
    if plan.nnodes_range is not None:
        return None
    return plan.world_size if plan.world_size and plan.world_size > 0 else None


def debug_title(plan: LaunchPlan) -> str:
    n = rank_count(plan)
    if n is None:
        return "▶ Debug · ? ranks"
    return f"▶ Debug · {n} rank" + ("" if n == 1 else "s")


def debug_tooltip(plan: LaunchPlan) -> str:
    n = rank_count(plan)
    what = plan.launcher
    if plan.entry is not None:
        what += " " + plan.entry.target.display
    if n is None:
        return f"Debug {what}; how many ranks it starts is not known here (hover for why)"
    return f"Debug {what} ({n} rank{'' if n == 1 else 's'}): pick ranks, then start the job"


def lenses_for(uri: str, plan: LaunchPlan, start: types.Position) -> list[types.CodeLens]:
    """The lenses of one command, placed on its first line."""
    if not is_training(plan):
        return []
    where = types.Range(start=start, end=start)
    args: list[object] = [uri, start.line]
    return [
        types.CodeLens(
            range=where,
            command=types.Command(
                title=debug_title(plan),
                command=DEBUG_COMMAND,
                tooltip=debug_tooltip(plan),
                arguments=args,
            ),
        ),
        types.CodeLens(
            range=where,
            command=types.Command(
                title="Pick ranks…",
                command=PICK_COMMAND,
                tooltip="Choose which ranks stop at breakpoints",
                arguments=args,
            ),
        ),
    ]

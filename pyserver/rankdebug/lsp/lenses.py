"""Code lenses above launch commands: ``▶ Debug · 4 ranks``, ``Pick ranks…`` and ``Smoke run``.

Both run commands the extension defines, with ``[uri, line]`` as arguments (``line`` is
the 0-based line the command starts on, as in LSP positions). Commands that do not start
Python training (``python -m pip``, ``python -c``, ``python setup.py``...) get none.

A script can have hundreds of commands, and the lenses are asked for after every edit:
they are made as the JSON text the client receives (:class:`Lenses`, written as it is by
``rankdebug.lsp.protocol``), from what each command shows (:class:`Texts`, kept while a
command only moves) and where it starts now.
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass

from rankdebug.command.plan import LaunchPlan

DEBUG_COMMAND = "rankdebug.debugCommand"
PICK_COMMAND = "rankdebug.pickRanks"
PICK_TITLE = "Pick ranks…"
PICK_TOOLTIP = "Choose which ranks stop at breakpoints"
SMOKE_COMMAND = "rankdebug.smokeRun"
SMOKE_TITLE = "Smoke run"
SMOKE_TOOLTIP = ("The same job shrunk to a run of seconds (a few steps, the smallest batch, "
                 "short sequences), shown as a diff; your files are not edited")

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


class Lenses:
    """A document's code lenses as the JSON text of the list the client receives."""

    __slots__ = ("json",)

    def __init__(self, pieces: list[str] | None = None) -> None:
        """``pieces``: each the JSON of a command's lenses (lenses_json)."""
        self.json = "[" + ",".join(pieces or ()) + "]"


@dataclass(frozen=True, slots=True)
class Texts:
    """What a command's lenses say, as JSON strings (ASCII, as pygls writes)."""

    uri: str
    title: str
    tooltip: str


def texts(uri: str, plan: LaunchPlan) -> Texts | None:
    """What the lenses of a command say; None when it gets none."""
    if not is_training(plan):
        return None
    return Texts(json.dumps(uri), json.dumps(debug_title(plan)),
                 json.dumps(debug_tooltip(plan)))


_PICK = f'"title": {json.dumps(PICK_TITLE)}, "command": "{PICK_COMMAND}", ' \
        f'"tooltip": {json.dumps(PICK_TOOLTIP)}'
_SMOKE = f'"title": {json.dumps(SMOKE_TITLE)}, "command": "{SMOKE_COMMAND}", ' \
         f'"tooltip": {json.dumps(SMOKE_TOOLTIP)}'


def lenses_json(t: Texts, line: int, character: int) -> str:
    """The JSON of a command's three lenses, placed on its first line (``character`` in the
    client's units): what lsprotocol would make of three ``types.CodeLens``."""
    pos = f'{{"line": {line}, "character": {character}}}'
    where = f'{{"start": {pos}, "end": {pos}}}'
    args = f"[{t.uri}, {line}]"
    return (f'{{"range": {where}, "command": {{"title": {t.title}, '
            f'"command": "{DEBUG_COMMAND}", "tooltip": {t.tooltip}, "arguments": {args}}}}}, '
            f'{{"range": {where}, "command": {{{_PICK}, "arguments": {args}}}}}, '
            f'{{"range": {where}, "command": {{{_SMOKE}, "arguments": {args}}}}}')

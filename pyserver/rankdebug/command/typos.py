"""A launcher's name one slip from a known one (``torchrn``, ``deepspeeed``, ``acclerate``):
said at plan time, with the name meant, before bash answers "command not found".

A name is a slip only when it is one edit (a letter added, dropped, changed, or two
swapped) from a launcher's program, is no shell builtin or function of the script, and is
no program on the PATH the command runs with: a real tool named like a launcher is left
alone.
"""

from __future__ import annotations

import os
import shutil

from tree_sitter import Node

from rankdebug.command.plan import Diagnostic
from rankdebug.command.state import State, text_of
from rankdebug.command.syntax import Positions, text
from rankdebug.launcher_table import TABLE

# Shorter names are one slip from too many real words (ray, tune, srun, lmf).
MIN_LENGTH = 5
TARGETS: tuple[str, ...] = tuple(sorted(
    {p for row in TABLE for p in row.programs if len(p) >= MIN_LENGTH} | {"python", "python3"}))
_BUILTINS = frozenset((
    "alias", "bg", "bind", "break", "builtin", "caller", "cd", "command", "compgen",
    "complete", "compopt", "continue", "declare", "dirs", "disown", "echo", "enable", "eval",
    "exec", "exit", "export", "false", "fc", "fg", "getopts", "hash", "help", "history", "jobs",
    "kill", "let", "local", "logout", "mapfile", "popd", "printf", "pushd", "pwd", "read",
    "readarray", "readonly", "return", "set", "shift", "shopt", "source", "suspend", "test",
    "times", "trap", "true", "type", "typeset", "ulimit", "umask", "unalias", "unset", "wait"))


def one_edit(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by exactly one insertion, deletion, substitution, or
    swap of two neighbouring letters."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long = (a, b) if len(a) < len(b) else (b, a)
    i = next((k for k in range(len(short)) if short[k] != long[k]), len(short))
    return short[i:] == long[i + 1:]


def meant(name: str) -> str | None:
    """The launcher program ``name`` is one slip from, when there is exactly one."""
    if len(name) < MIN_LENGTH or name in TARGETS or name in _BUILTINS:
        return None
    close = [t for t in TARGETS if one_edit(name, t)]
    return close[0] if len(close) == 1 else None


def on_path(name: str, path: str | None) -> bool:
    return shutil.which(name, path=path if path is not None else os.environ.get("PATH")) \
        is not None


def slip(node: Node, pos: Positions, state: State) -> Diagnostic | None:
    """The diagnostic for a command whose name, written as is, is a launcher's misspelt."""
    name_node = node.child_by_field_name("name")
    if name_node is None or name_node.child_count != 1 or name_node.children[0].type != "word":
        return None
    name = text(name_node)
    best = meant(name)
    if best is None or name in state.functions:
        return None
    path_var = state.lookup("PATH")
    path = text_of(path_var.value) if path_var is not None and path_var.value else None
    if on_path(name, path):
        return None
    return Diagnostic(f"{name}: no such program; did you mean {best}?", pos.span(name_node),
                      "error", "unknown-launcher", fix=best)

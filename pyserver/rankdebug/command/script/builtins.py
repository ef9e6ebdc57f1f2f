"""The builtins whose effects on variables, the directory or the exit status are
followed: `cd`, `source`, `read`, `set --`, `shift`, `let`, `printf -v`, `test`..."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tree_sitter import Node

from rankdebug.command.expand.expander import Expander
from rankdebug.command.plan import Diagnostic
from rankdebug.command.read import DEFAULT_IFS, read_vars
from rankdebug.command.script.conditions import test_words
from rankdebug.command.script.walk import Status, Walk
from rankdebug.command.state import State, Var, text_of, unknown
from rankdebug.command.syntax import text
from rankdebug.command.words import Word


@dataclass
class Run:
    """A special builtin being run: its name and node, the state, its expanded words."""

    name: str
    node: Node
    seg: int
    state: State
    args: list[Word]
    ex: Expander

    @property
    def values(self) -> list[str | None]:
        return [w.value for w in self.args]


def _cd(w: Walk, run: Run) -> tuple[State, Status]:
    state, values = run.state, run.values
    if run.name == "popd" or (values and values[0] == "-"):
        state.cwd = None
        return state, None
    home = state.lookup("HOME")
    state.chdir(values[0] if values else (text_of(home.scalar) if home else None))
    return state, None


def _source(w: Walk, run: Run) -> tuple[State, Status]:
    values = run.values
    if values and values[0] is not None:
        return w.source(values[0], run.seg, run.state), None
    return run.state, None


def _read_builtin(w: Walk, run: Run) -> tuple[State, Status]:
    line = w.positions(run.seg).line_of(run.node) + 1
    stdin = run.ex.stdin(run.node) if run.name != "getopts" else None
    why = f"is read at run time ({run.name} at line {line})"
    for name, var in read_vars(run.name, run.values, stdin, _ifs(run), why).items():
        run.state.set(name, var)
    return run.state, None


def _ifs(run: Run) -> str | None:
    """The IFS a builtin splits with: its own `IFS=...` assignment, else the script's
    (None when not known)."""
    for child in run.node.children:
        name = child.child_by_field_name("name") if child.type == "variable_assignment" else None
        if name is not None and text(name) == "IFS":
            value = child.child_by_field_name("value")
            return text_of(run.ex.scalar(value)) if value is not None else ""
    var = run.state.lookup("IFS")
    return DEFAULT_IFS if var is None else text_of(var.scalar)


def _printf(w: Walk, run: Run) -> tuple[State, Status]:
    values = run.values
    if len(values) >= 2 and values[0] == "-v" and values[1]:
        run.state.set(values[1], Var(unknown("$" + values[1], "set by printf -v")))
    return run.state, None


def _let(w: Walk, run: Run) -> tuple[State, Status]:
    for word in run.args:
        if word.value is not None:
            run.ex.arith_text(word.value)
    return run.state, None


def _set(w: Walk, run: Run) -> tuple[State, Status]:
    values = run.values
    if "--" in values:
        run.state.positional = [word.parts for word in run.args[values.index("--") + 1:]]
    return run.state, None


def _shift(w: Walk, run: Run) -> tuple[State, Status]:
    state, values = run.state, run.values
    if state.positional is not None:
        n = int(values[0]) if values and values[0] and values[0].isdigit() else 1
        state.positional = state.positional[n:]
    return state, None


def _eval(w: Walk, run: Run) -> tuple[State, Status]:
    w.diagnostics.append(Diagnostic(
        "eval runs text as code; what it sets is not known",
        w.positions(run.seg).span(run.node), "info", "eval"))
    return run.state, None


# Commands whose effects on variables, the directory or the status are followed.
BUILTINS: dict[str, Callable[[Walk, Run], tuple[State, Status]]] = {
    "true": lambda w, run: (run.state, True),
    ":": lambda w, run: (run.state, True),
    "false": lambda w, run: (run.state, False),
    "test": lambda w, run: (run.state, test_words([v for v in run.values if v != "]"])),
    "[": lambda w, run: (run.state, test_words([v for v in run.values if v != "]"])),
    "cd": _cd, "pushd": _cd, "popd": _cd,
    "source": _source, ".": _source,
    "read": _read_builtin, "mapfile": _read_builtin, "readarray": _read_builtin,
    "getopts": _read_builtin,
    "printf": _printf,
    "let": _let,
    "set": _set,
    "shift": _shift,
    "eval": _eval,
    "exit": lambda w, run: (run.state, None),
    "return": lambda w, run: (run.state, None),
}


"""Command substitutions, never run: only pure idioms are computed (``$(pwd)``,
``$(dirname X)``, ``$(basename X)``, ``$(cd X && pwd)``, ``$(realpath X)``, ``$(echo ...)``,
``$(which X)``), with ``$(scontrol show hostnames ...)`` and ``$(cat <<EOF ...)``; anything
else is an unknown part that says why."""

from __future__ import annotations

import shutil
from collections.abc import Callable

from tree_sitter import Node

from rankdebug.command.expand.chunks import Expansion, cmd_name
from rankdebug.command.hostlist import Stage, scontrol_hostnames
from rankdebug.command.state import Scalar, State, known, normalize, text_of, unknown
from rankdebug.command.syntax import text
from rankdebug.command.words import Part


def substitution(ex: Expansion, node: Node) -> Scalar:
    src = text(node)
    value = _pure_substitution(ex, node)
    if value is not None:
        return known(value)
    slurm = _scontrol(ex, node)
    if slurm is not None:
        out, why = slurm
        return known(out) if out is not None else unknown(src, f"{src[:60]}: {why}")
    held = _cat_heredoc(ex, node)
    if held is not None:
        return held
    short = src if len(src) <= 60 else src[:57] + "..."
    return unknown(src, f"{short} is a command; it is not run to read its output")


def _pure_substitution(ex: Expansion, node: Node) -> str | None:
    """`$(pwd)`, `$(dirname X)`, `$(basename X)`, `$(cd X && pwd)`, `$(realpath X)`."""
    body = [c for c in node.named_children if c.type != "comment"]
    if len(body) != 1:
        return None
    stmt = body[0]
    if stmt.type == "list":
        return _cd_pwd(ex, stmt)
    if stmt.type != "command":
        return None
    vals = [text_of(ex.scalar(a)) for a in stmt.children_by_field_name("argument")]
    pure = _PURE.get(cmd_name(stmt))
    if pure is None or any(v is None for v in vals):
        return None
    return pure(ex.state, [v for v in vals if v is not None])


def _scontrol(ex: Expansion, node: Node) -> tuple[str | None, str] | None:
    """`$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)` and `| wc -l`."""
    body = [c for c in node.named_children if c.type != "comment"]
    if len(body) != 1 or body[0].type not in ("pipeline", "command"):
        return None
    cmds = body[0].named_children if body[0].type == "pipeline" else [body[0]]
    if not cmds or any(c.type != "command" for c in cmds) or cmd_name(cmds[0]) != (
            "scontrol"):
        return None
    stages = []
    for cmd in cmds:
        args = cmd.children_by_field_name("argument")
        stages.append(Stage(cmd_name(cmd), [text_of(ex.scalar(a)) for a in args],
                            [text(a) for a in args]))
    env: dict[str, str | None] = {}
    for name in ("SLURM_JOB_NODELIST", "SLURM_NNODES", "SLURM_JOB_NUM_NODES"):
        var = ex.state.lookup(name)
        if var is not None and var.value is not None:
            env[name] = text_of(var.value)
    return scontrol_hostnames(stages, env)


def _cat_heredoc(ex: Expansion, node: Node) -> Scalar | None:
    """`$(cat <<EOF ... EOF)`: the here-document, without its trailing newlines."""
    body = [c for c in node.named_children if c.type != "comment"]
    if len(body) != 1 or body[0].type != "redirected_statement":
        return None
    cmd = body[0].child_by_field_name("body")
    if cmd is None or cmd.type != "command" or cmd_name(cmd) != "cat" or (
            cmd.children_by_field_name("argument")):
        return None
    value = ex.stdin(cmd)
    if value is None:
        return None
    parts = list(value)
    while parts and parts[-1].known and parts[-1].text.endswith("\n"):
        stripped = parts[-1].text.rstrip("\n")
        parts[-1:] = [Part(stripped)] if stripped else []
    return normalize(tuple(parts))


def _cd_pwd(ex: Expansion, stmt: Node) -> str | None:
    """`$(cd X && pwd)`."""
    if len(stmt.named_children) != 2:
        return None
    first, second = stmt.named_children
    if not (second.type == "command" and cmd_name(second) == "pwd"
            and first.type == "command" and cmd_name(first) == "cd"):
        return None
    args = first.children_by_field_name("argument")
    if len(args) != 1:
        return None
    d = text_of(ex.scalar(args[0]))
    if d is None or (ex.state.cwd is None and not d.startswith("/")):
        return None
    probe = ex.state.copy()
    probe.chdir(d)
    return probe.cwd


# ---- pure command substitutions ---------------------------------------------------


def _operands(vals: list[str]) -> list[str]:
    return [v for v in vals if not v.startswith("-")]


def _pwd(state: State, vals: list[str]) -> str | None:
    return state.cwd if not vals else None


def _dirname(state: State, vals: list[str]) -> str | None:
    strs = _operands(vals)
    if len(strs) != 1:
        return None
    head = strs[0].rstrip("/").rsplit("/", 1)
    return (head[0] or "/") if len(head) == 2 else "."


def _basename(state: State, vals: list[str]) -> str | None:
    strs = _operands(vals)
    if not strs:
        return None
    base = strs[0].rstrip("/").rsplit("/", 1)[-1]
    if len(strs) == 2 and base.endswith(strs[1]):
        base = base[: -len(strs[1])]
    return base


def _realpath(state: State, vals: list[str]) -> str | None:
    strs = _operands(vals)
    if len(strs) != 1:
        return None
    p = strs[0]
    if not p.startswith("/"):
        if state.cwd is None:
            return None
        p = state.cwd + "/" + p
    probe = state.copy()
    probe.cwd = "/"
    probe.chdir(p)
    return probe.cwd


def _echo(state: State, vals: list[str]) -> str | None:
    return " ".join(vals) if all(not v.startswith("-") for v in vals) else None


def _which(state: State, vals: list[str]) -> str | None:
    """`which X`, `command -v X`, `type -P X`: where X is on the script's PATH. Running
    the name finds the same program, so without a known PATH (or when X is not on it
    here) the name stands for it; found here, the path does (a launcher that runs
    `python SCRIPT` needs a path, not a name)."""
    if len(vals) != 1 or not vals[0] or vals[0].startswith("-"):
        return None  # `which -a X` and `which X Y` print several lines
    name = vals[0]
    path_var = state.lookup("PATH")
    search = text_of(path_var.scalar) if path_var is not None else None
    if search is None:
        return name
    try:
        found = shutil.which(name, path=search)
    except (OSError, ValueError):
        found = None
    return found or name


def _command_v(state: State, vals: list[str]) -> str | None:
    return _which(state, vals[1:]) if vals[:1] == ["-v"] else None


def _type_path(state: State, vals: list[str]) -> str | None:
    return _which(state, vals[1:]) if vals[:1] in (["-P"], ["-p"]) else None


_PURE: dict[str, Callable[[State, list[str]], str | None]] = {
    "pwd": _pwd, "dirname": _dirname, "basename": _basename, "realpath": _realpath,
    "readlink": _realpath, "echo": _echo, "which": _which, "command": _command_v,
    "type": _type_path,
}


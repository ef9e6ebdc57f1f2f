"""The command engine: launch commands as people write them → launch plans.

Public API (lines are 1-based, as people count them):

- ``plan_text(text, line)``: the plan of the command at a line of a script or Markdown text.
- ``plan_file(path, line)``: the same for a file on disk.
- ``plan_argv(argv)``: the plan of an argv (or of one string holding a whole command).
- ``plan_all(text)``: every launch command of a document, for code lenses.

Nothing is ever executed. Errors are ``CommandError`` with a position.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rankdebug.command.errors import CommandError
from rankdebug.command.plan import Diagnostic, LaunchPlan
from rankdebug.command.planner import Options, Where, plan_all_commands, plan_document

if TYPE_CHECKING:
    from typing import Unpack  # Python 3.11; the annotations are not evaluated at run time

__all__ = ["CommandError", "Diagnostic", "DocumentPlans", "LaunchPlan", "command_words",
           "plan_all", "plan_args", "plan_argv", "plan_file", "plan_text"]

MAX_FILE_BYTES = 16 << 20


def plan_text(text: str | bytes, line: int, **where: Unpack[Where]) -> LaunchPlan:
    """Plan the command at 1-based ``line``. ``language`` is "shell" or "markdown"
    (default: from ``path``'s suffix). ``caller_env`` holds variables of the environment
    the script runs in; it is the whole environment (names it lacks are unset) unless
    ``env_complete`` is False. ``cwd`` is where relative paths resolve."""
    return plan_document(text, line, Options(**where))


def plan_file(
    path: str | Path,
    line: int,
    *,
    caller_env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    env_complete: bool | None = None,
) -> LaunchPlan:
    """Plan the command at 1-based ``line`` of a file. Relative paths in the command
    resolve against ``cwd`` (default: the current directory)."""
    p = Path(path)
    try:
        if p.stat().st_size > MAX_FILE_BYTES:
            raise CommandError(f"{p} is larger than {MAX_FILE_BYTES >> 20} MB", None, None)
        data = p.read_bytes()
    except OSError as exc:
        raise CommandError(f"cannot read {p}: {exc.strerror or exc}", None, None) from exc
    work = cwd if cwd is not None else Path.cwd()
    return plan_text(data, line, path=str(path), caller_env=caller_env, cwd=work.absolute(),
                     env_complete=env_complete)


def plan_argv(
    argv: Sequence[str],
    *,
    caller_env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    env_complete: bool | None = None,
) -> LaunchPlan:
    """Plan an argv as given to exec (leading NAME=value words are inline
    assignments). One element holding spaces is read as a whole shell command."""
    if not argv:
        raise CommandError("no command given", 1, 1)
    if len(argv) == 1 and any(ch.isspace() for ch in argv[0]):
        text = argv[0]
    else:
        text = " ".join(_quote_argv(argv))
    work = cwd if cwd is not None else Path.cwd()
    return plan_text(text, 1, language="shell", caller_env=caller_env, cwd=work.absolute(),
                     env_complete=env_complete)


def plan_args(
    args: argparse.Namespace,
    *,
    caller_env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    env_complete: bool | None = None,
) -> LaunchPlan:
    """The command a verb was given, as ``--file FILE --line N`` or ``-- COMMAND``
    (``plan``, ``launch``, ``smoke``: ``args.file``, ``args.line``, ``args.command``): planned
    from the file or the words, one of the two."""
    file: str | None = args.file
    line: int | None = args.line
    words = command_words(args.command)
    if file and words:
        raise CommandError("give either --file/--line or a command, not both", None, None)
    if file:
        if line is None:
            raise CommandError("--file needs --line", None, None)
        return plan_file(file, line, caller_env=caller_env, cwd=cwd, env_complete=env_complete)
    if not words:
        raise CommandError("give either --file and --line, or a command after --", None, None)
    return plan_argv(words, caller_env=caller_env, cwd=cwd, env_complete=env_complete)


def command_words(command: Sequence[str]) -> list[str]:
    """A verb's words after ``--`` (argparse keeps the ``--`` of a REMAINDER)."""
    return list(command[1:] if command[:1] == ["--"] else command)


def plan_all(text: str | bytes, **where: Unpack[Where]
             ) -> tuple[list[LaunchPlan], list[Diagnostic]]:
    """Every launch command in a document (launcher other than "other"), with
    document-level diagnostics (encoding, CRLF, unreadable lines)."""
    return plan_all_commands(text, Options(**where))


def _quote_argv(argv: Sequence[str]) -> list[str]:
    import re
    import shlex

    out = []
    for i, arg in enumerate(argv):
        # Leading NAME=value words stay assignments; everything else is quoted verbatim.
        if all(re.fullmatch(r"[A-Za-z_]\w*=.*", a) for a in argv[: i + 1]):
            name, _, value = arg.partition("=")
            out.append(f"{name}={shlex.quote(value)}")
        else:
            out.append(shlex.quote(arg))
    return out


def __getattr__(name: str) -> object:
    # DocumentPlans pulls in the incremental machinery; only the server needs it.
    if name == "DocumentPlans":
        from rankdebug.command.incremental import DocumentPlans

        return DocumentPlans
    raise AttributeError(name)

"""Following the script a command runs (`bash train.sh ARGS`, `sbatch job.sbatch`,
`./run.sh`): where its name is in argv, reading it, a wrapper that is not there, and its
plan shown at the command that runs it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rankdebug.command import launchers
from rankdebug.command.entry import script_missing, where
from rankdebug.command.inline import SHELLS
from rankdebug.command.launchers.base import Context
from rankdebug.command.launchers.common import basename
from rankdebug.command.plan import Diagnostic, LaunchPlan
from rankdebug.command.sbatch import SBATCH_FLAGS
from rankdebug.command.words import Word

_SHELLS = SHELLS | {"source", "."}


def script_word(argv: Sequence[Word]) -> tuple[int, list[Word]] | None:
    """Where the script of `bash [opts] X`, `sbatch [opts] X` or `./x.sh` is in argv, and
    the sbatch options given."""
    start, _ = launchers.unwrap(argv)
    base = basename(argv[start]) if start < len(argv) else None
    if base is None:
        return None
    extra_sbatch: list[Word] = []
    i: int | None
    if base in _SHELLS:
        i = _after_shell_options(argv, start + 1)
    elif base == "sbatch":
        i = _after_sbatch_options(argv, start + 1, extra_sbatch)
    elif base.endswith((".sh", ".bash", ".sbatch", ".slurm")):
        i = start
    else:
        return None
    # A script whose folder is not known here can still be known by its name.
    if i is None or i >= len(argv) or basename(argv[i]) is None:
        return None
    return i, extra_sbatch


def missing_wrapper(plan: LaunchPlan, ctx: Context, document: str | None,
                    script: Word) -> None:
    """A wrapper script that is not there: named, instead of planning the shell itself."""
    name = script.value
    if name is None or ctx.cwd is None or not script_missing(name, ctx.cwd):
        return
    message = (f"the wrapper script {name} does not exist{where(name, ctx.cwd)}, so the "
               "command it runs cannot be read (bash would stop: No such file or directory)")
    if document is not None and not Path(document).is_absolute():
        document = str(ctx.cwd / document)  # a followed script, named from the cwd
    found = _wrapper_elsewhere(name, document)
    if found is not None:
        message += f"; it is there from {found} (run the command in that folder)"
    plan.warn(message, script.span, code="missing-wrapper", severity="error")


def _wrapper_elsewhere(name: str, document: str | None) -> Path | None:
    """The folder ``name`` is found from: the document's or one of the three above it (a
    script in scripts/ meant to be run from the project's root)."""
    if document is None or Path(name).is_absolute():
        return None
    folder = Path(document).resolve().parent
    for base in (folder, *list(folder.parents)[:3]):
        try:
            if (base / name).is_file():
                return base
        except OSError:
            return None
    return None


def _after_shell_options(argv: Sequence[Word], i: int) -> int | None:
    """The index after a shell's options; None for `bash -c CODE`."""
    while i < len(argv) and (argv[i].value or "").startswith("-"):
        if argv[i].value in ("-c",):
            return None
        i += 1
    return i


def _after_sbatch_options(argv: Sequence[Word], i: int, options: list[Word]) -> int:
    """The index after sbatch's options, which are added to ``options``."""
    while i < len(argv) and (argv[i].value or "").startswith("-"):
        flag = argv[i].value or ""
        takes = "=" not in flag and flag not in SBATCH_FLAGS
        options.append(argv[i])
        if takes and i + 1 < len(argv):
            options.append(argv[i + 1])
            i += 1
        i += 1
    return i


def read_script(ctx: Context, script: str) -> bytes | None:
    path = ctx.resolve(script)
    if path is None:
        return None
    try:
        return path.read_bytes()
    except OSError:
        return None


def followed(inner: LaunchPlan, plan: LaunchPlan, script: str) -> LaunchPlan:
    """The plan of the script's first launch command, shown at the command that runs it."""
    where = f"{script}:{inner.span.start_line + 1}"
    outer_span = plan.span
    inner.diagnostics = [
        Diagnostic(f"in {where}: {d.message}", outer_span, d.severity, d.code)
        for d in inner.diagnostics
    ]
    inner.options = []
    inner.warn(f"planned from the command at {where}", outer_span, code="followed",
               severity="info")
    inner.followed = where
    inner.span = outer_span
    # The job is the inner command: its own assignments (`PYTHONPATH=.. python -m ...`) too.
    inner.env = {**plan.env, **inner.env}
    inner.background = plan.background
    return inner

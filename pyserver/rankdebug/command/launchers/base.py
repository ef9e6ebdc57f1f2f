"""What every launcher module gets: the evaluated command and what surrounds it.

A launcher module exposes::

    NAME: str                                   # the plan's "launcher" value, a name of
                                                # rankdebug.launcher_table (its row: ROW)
    def matches(argv: Sequence[Word]) -> int | None
        # None if argv is not this launcher; else the index of the first
        # launcher argument (e.g. 1 for `torchrun ...`, 3 for
        # `python -m torch.distributed.run ...`).
    def parse(ctx: Context, start: int) -> None
        # fill ctx.plan from ctx.plan.argv[start:]

The shell layer has already expanded variables; words may still be partly
unknown (Word.value is None). Launchers never guess: an unknown number stays
None and gets a diagnostic saying why.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from rankdebug.command.plan import LaunchPlan
from rankdebug.command.words import Word


@dataclass
class Inlined:
    """The command that shell code held in words runs (``eval "$CMD"``, ``bash -c CODE``)."""

    argv: list[Word]
    # Assignments written before the command in the code (`X=1 torchrun ...`).
    inline_env: dict[str, Word]
    # Variables exported when the command runs.
    exported: dict[str, Word]
    cwd: str | None
    # How the code was run, for messages: "eval" or "bash -c".
    what: str


# argv, the index of the command there and its environment: what that command's code
# runs; None when it runs no code, or why the code cannot be read.
Inliner = Callable[[Sequence[Word], int, Mapping[str, Word]], "Inlined | str | None"]


@dataclass
class Context:
    plan: LaunchPlan
    # The environment the launched process sees: caller env, then the script's
    # exported variables, then the inline assignments. A Word may be unknown.
    env: Mapping[str, Word]
    # Every shell variable set at that point, exported or not (for hints like
    # "NPROC_PER_NODE is set but not exported").
    shell_vars: Mapping[str, Word] = field(default_factory=dict)
    # Directory that relative paths in the command resolve against, if known.
    cwd: Path | None = None
    # Arguments of `#SBATCH` directives in the script, in order.
    sbatch_args: Sequence[Word] = ()
    # Reads shell code held in words (None where that is not wanted).
    inline: Inliner | None = None

    def resolve(self, path: str) -> Path | None:
        """An existing file named by `path` (relative to cwd), else None."""
        p = Path(path).expanduser()
        if not p.is_absolute():
            if self.cwd is None:
                return None
            p = self.cwd / p
        try:
            return p if p.is_file() else None
        except OSError:
            return None

    def read_text(self, path: str, limit: int = 1 << 20) -> str | None:
        """Contents of a small existing text file (hostfile, YAML config), else None."""
        p = self.resolve(path)
        if p is None:
            return None
        try:
            with p.open("rb") as f:
                data = f.read(limit + 1)
        except OSError:
            return None
        if len(data) > limit or b"\0" in data:
            return None
        return data.decode("utf-8", errors="replace")

    def env_value(self, name: str) -> str | None:
        """A known environment value, else None (unset or unknown)."""
        w = self.env.get(name)
        return None if w is None else w.value


class LauncherModule(Protocol):
    """What every launcher module provides (see above)."""

    NAME: str

    def matches(self, argv: Sequence[Word]) -> int | None: ...

    def parse(self, ctx: Context, start: int) -> None: ...


def first_match(
    modules: Sequence[LauncherModule], argv: Sequence[Word], at: int
) -> tuple[LauncherModule, int] | None:
    """The first of ``modules`` that takes the command at ``argv[at:]``, and the absolute
    index of its arguments."""
    rest = argv[at:]
    if not rest:
        return None
    for module in modules:
        rel = module.matches(rest)
        if rel is not None:
            return module, at + rel
    return None

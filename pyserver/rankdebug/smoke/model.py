"""What a smoke rewrite produces: the changes, each explained, and the runnable command.

Its JSON form is the ``rankdebug smoke --json`` contract (shared/design.md, "Wave 2
contracts"): ``{"argv", "env", "changes": [{"name", "from", "to", "why", "where"}],
"files"}``, plus optional keys (``command``, ``notes``, ``missing``, ``frameworks``, ``plan``,
``original``: the command as written ``{"argv", "env"}``, ``copies``: ``[{"from", "to"}]``).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Change:
    """One knob changed: ``name`` as the framework spells it, ``where`` it lives (a flag, a
    config key, a script variable, an environment variable). ``None`` is "not set"."""

    name: str
    old: str | None
    new: str | None
    why: str
    where: str

    def to_json(self) -> dict[str, str | None]:
        return {"name": self.name, "from": self.old, "to": self.new, "why": self.why,
                "where": self.where}


@dataclass(frozen=True, slots=True)
class Input:
    """A path the command names that the job reads: checked by ``--check``."""

    kind: str  # "model", "data", "config", "tokenizer"
    value: str
    where: str
    # A hub id is acceptable for models and data sets (it is reported, never downloaded).
    hub: bool = False


@dataclass(slots=True)
class Smoke:
    """The smoke version of one command."""

    argv: list[str]
    env: dict[str, str]
    changes: list[Change] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    frameworks: list[str] = field(default_factory=list)
    # Words whose value is not known here (``$1``): kept as written, never quoted.
    unknown: set[int] = field(default_factory=set)
    plan: dict[str, object] = field(default_factory=dict)
    inputs: list[Input] = field(default_factory=list)
    packages: dict[str, str] = field(default_factory=dict)  # package -> framework
    # The command as written, in the same form (the left side of the editor's diff).
    original: dict[str, object] = field(default_factory=dict)
    copies: list[tuple[str, str]] = field(default_factory=list)

    @property
    def command(self) -> str:
        """One shell line: the assignments, then the words, quoted except unknown ones."""
        words = [f"{k}={shlex.quote(v)}" for k, v in self.env.items()]
        words += [w if i in self.unknown else shlex.quote(w) for i, w in enumerate(self.argv)]
        return " ".join(words)

    def to_json(self) -> dict[str, object]:
        return {
            "argv": self.argv,
            "env": self.env,
            "changes": [c.to_json() for c in self.changes],
            "files": self.files,
            "command": self.command,
            "notes": self.notes,
            "missing": self.missing,
            "frameworks": self.frameworks,
            "plan": self.plan,
            "original": self.original,
            "copies": [{"from": src, "to": dst} for src, dst in self.copies],
        }

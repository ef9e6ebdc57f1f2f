"""What a smoke rewrite produces: the changes, each explained, and the runnable command.

Its JSON form is the ``rankdebug smoke --json`` contract (shared/design.md, "Wave 2
contracts"): ``{"argv", "env", "changes": [{"name", "from", "to", "why", "where"}],
"files"}``, plus optional keys (``command``, ``notes``, ``missing``, ``frameworks``, ``plan``,
``original``: the command as written ``{"argv", "env"}``, ``copies``: ``[{"from", "to"}]``,
``not_applied``: ``[{"name", "why"}]``, knobs the script cannot be given from outside,
``hook``: the run-time hook's file and settings or null, ``gpu_uses``: where the script asks
for CUDA/NCCL, ``cpu_change``: what ``--cpu`` sets).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from rankdebug.smoke.gpu_use import Use


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
    # Knobs no channel reaches (name, why): never reported as changed.
    not_applied: list[tuple[str, str]] = field(default_factory=list)
    # The run-time hook: {"path", "steps", "training_args"}; empty when the run has none.
    hook: dict[str, object] = field(default_factory=dict)
    gpu_uses: list[Use] = field(default_factory=list)
    cpu_change: list[str] = field(default_factory=list)  # what --cpu sets ("--backend=gloo")
    on_cpu: bool = False  # made with --cpu: cpu_change is done, not offered
    entry_name: str | None = None  # the entry script as written, for messages

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
            "not_applied": [{"name": n, "why": why} for n, why in self.not_applied],
            "hook": self.hook or None,
            "gpu_uses": [u.to_json() for u in self.gpu_uses],
            "cpu_change": self.cpu_change,
        }

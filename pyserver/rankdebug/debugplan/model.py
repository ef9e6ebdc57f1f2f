"""The debug plan: what to run for a launch plan and a rank choice, as one frozen value."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rankdebug.command.plan import LaunchPlan
from rankdebug.debugplan.options import LaunchOptions
from rankdebug.debugplan.origin import Origin
from rankdebug.ranks import Selection


@dataclass(frozen=True, eq=False)
class DebugPlan:
    plan: LaunchPlan
    origin: Origin
    selection: Selection
    options: LaunchOptions
    # Where ``argv`` runs; the command itself runs in ``plan.cwd`` when the plan says.
    cwd: str
    # The start-up breakpoints with real paths.
    breaks: tuple[tuple[str, int], ...]
    # ``rankdebug launch …``: what the editor (or a terminal) runs.
    argv: tuple[str, ...]
    # Variables to add to the caller's environment for ``argv``.
    env: Mapping[str, str]
    # A short name of the job (the entry's file or module).
    title: str
    # One ``rankdebug`` attach configuration per chosen rank, and their compound.
    configurations: tuple[Mapping[str, Any], ...]
    compound: Mapping[str, Any]
    warnings: tuple[str, ...] = ()

    @property
    def run_cwd(self) -> str:
        """Where the command itself runs."""
        return self.plan.cwd or self.cwd

    def to_json(self) -> dict[str, Any]:
        """The ``rankdebug.debugPlan`` reply (camelCase, as the extension reads it)."""
        return {
            "plan": self.plan.to_json(),
            "title": self.title,
            "argv": list(self.argv),
            "env": dict(self.env),
            "cwd": self.cwd,
            "rankSpec": self.selection.spec,
            "ranks": self.selection.ranks,
            "host": self.options.host,
            "configurations": [dict(c) for c in self.configurations],
            "compound": dict(self.compound),
            "armed": self.options.arm,
            "warnings": list(self.warnings),
        }

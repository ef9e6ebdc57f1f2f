"""The state of one smoke rewrite, shared by the launcher and framework modules."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from rankdebug.command import LaunchPlan
from rankdebug.command.entry import script_path
from rankdebug.smoke import configs
from rankdebug.smoke.args import ArgList
from rankdebug.smoke.folder import Folder
from rankdebug.smoke.model import Change, Input

# A test of a knob's old value that leaves it alone (e.g. already small enough).
Keep = Callable[[str | None], bool]
# Launchers whose ranks start on this machine with its environment (the run-time hook's).
LOCAL_LAUNCHERS = frozenset({
    "python", "torchrun", "torch.distributed.launch", "deepspeed", "accelerate",
    "llamafactory-cli", "colossalai", "tune", "litgpt", "xtuner", "swift", "axolotl",
    "composer", "fabric", "lightning", "detectron2", "xla_spawn", "other"})


@dataclass(frozen=True, slots=True)
class Settings:
    """How small a smoke run is. ``nproc``: ranks per node the user asked for."""

    steps: int = 3
    nproc: int | None = None
    seq_len: int = 128
    cpu: bool = False  # run the ranks on the CPU: device and backend knobs to cpu/gloo


@dataclass
class Rewrite:
    plan: LaunchPlan
    cwd: Path
    settings: Settings
    head: ArgList  # the launcher's words, up to and including the entry
    args: ArgList  # the entry's arguments
    env: dict[str, str]
    folder: Folder
    changes: list[Change] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    # (the user's config, its smoke copy), for the editor's diff of the two.
    copies: list[tuple[str, str]] = field(default_factory=list)
    inputs: list[Input] = field(default_factory=list)
    # What --check imports: package -> the framework that needs it.
    packages: dict[str, str] = field(default_factory=dict)
    framework: str = ""  # the framework module rewriting now
    # Ranks the code's model parallelism needs (tensor x pipeline x context), at least 1.
    parallel: int = 1
    # The smoke run's shape, set by ranks.py before the frameworks run.
    per_node: int | None = None
    nodes: int = 1
    not_applied: list[tuple[str, str]] = field(default_factory=list)
    # Why the smoke run must stop the job itself after its steps (run-time hook); None: the
    # script's own step limit, as verified, ends it.
    stop_reason: str | None = None
    # TrainingArguments fields the hook sets at run time (a script that builds them in code).
    runtime_args: dict[str, object] = field(default_factory=dict)
    # The script's module-level names are keys its command line sets (nanoGPT's configurator).
    configurator: bool = False
    # Values of the script's names set outside it (a config file the configurator runs).
    values: dict[str, str] = field(default_factory=dict)
    cpu_change: list[str] = field(default_factory=list)  # what --cpu sets (or did)
    _configs: dict[Path, dict[str, Any] | None] = field(default_factory=dict)

    @property
    def world(self) -> int:
        """The smoke run's world size (1 when the command starts one process)."""
        return (self.per_node or 1) * self.nodes

    @property
    def data_parallel(self) -> int:
        return max(1, self.world // max(1, self.parallel))

    # -- reading the entry ------------------------------------------------------------
    @property
    def entry_path(self) -> Path | None:
        entry = self.plan.entry
        if entry is None or entry.kind != "script" or entry.target.value is None:
            return None
        return self.resolve(entry.target.value)

    @cached_property
    def source(self) -> str | None:
        """The entry script's text, when it is a readable Python file here."""
        path = self.entry_path
        return configs.read_text(path, errors="replace") if path else None

    def config(self, text: str) -> dict[str, Any] | None:
        """The config file ``text`` names, read once per rewrite: a framework's ``parallel``
        and ``rewrite`` share it (``rewrite`` may then change it for its copy)."""
        path = self.resolve(text)
        if path not in self._configs:
            self._configs[path] = configs.load(path)
        return self._configs[path]

    def resolve(self, text: str) -> Path:
        """A path the command names, as the job sees it (``~`` expanded, from the cwd)."""
        return script_path(text, self.cwd)

    def entry_module(self) -> str | None:
        entry = self.plan.entry
        return entry.target.value if entry is not None and entry.kind == "module" else None

    # -- recording --------------------------------------------------------------------
    def change(self, name: str, old: object, new: object, why: str, where: str) -> bool:
        """Record the change of ``name`` (none when both texts are the same); returns whether
        one was recorded."""
        o, n = plain_text(old), plain_text(new)
        if o == n:
            return False
        self.changes.append(Change(name, o, n, why, where))
        return True

    def copied(self, source: Path, copy: Path) -> None:
        """``copy`` (in the private folder) now stands for the user's ``source``."""
        self.files.append(str(copy))
        self.copies.append((str(source), str(copy)))

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def lack(self, text: str) -> None:
        """A knob that could not be found: reported, never guessed."""
        if text not in self.missing:
            self.missing.append(text)

    def unapplied(self, name: str, why: str) -> None:
        """A knob the smoke run would change but cannot reach: said, never claimed."""
        if all(n != name for n, _ in self.not_applied):
            self.not_applied.append((name, why))

    @property
    def hook_reaches(self) -> bool:
        """Whether the run-time hook reaches every rank: they start on this machine, from a
        launcher that passes its environment on (not srun, mpirun or ray, whose ranks may
        start on other machines, where the smoke folder is not)."""
        return self.nodes == 1 and self.plan.launcher in LOCAL_LAUNCHERS

    def stop_after_steps(self, reason: str) -> None:
        """Have the smoke run end the job itself after its steps (``hook.py``); ``reason``:
        why the script's own limit cannot be trusted to."""
        if not self.hook_reaches:
            self.lack(f"the smoke run cannot hold the job to {self.settings.steps} steps "
                      f"({reason}): its ranks may start on other machines, out of the run-time "
                      "hook's reach")
        elif self.stop_reason is None:
            self.stop_reason = reason

    def need(self, *packages: str) -> None:
        for p in packages:
            self.packages.setdefault(p, self.framework)

    def reads(self, kind: str, value: str | None, where: str, *, hub: bool = False) -> None:
        if value and value.lower() not in ("none", "null", ""):
            self.inputs.append(Input(kind, value, where, hub))


def plain_text(value: object) -> str | None:
    """A value as configs and the changes write it (``true``, ``3``); None stays None."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def smaller(limit: float) -> Keep:
    """A ``keep_if`` test: keep a numeric value already at or below ``limit``."""
    def keep(value: str | None) -> bool:
        number = as_number(value)
        return number is not None and number <= limit
    return keep


def as_number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip().strip("'\""))
        except ValueError:
            return None
    return None


def as_int(value: object) -> int | None:
    number = as_number(value)
    return int(number) if number is not None and number == int(number) else None

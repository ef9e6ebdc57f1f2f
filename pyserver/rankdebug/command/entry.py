"""Is a plan's entry script there? One rule for the editor's ``missing-script`` warning and
``rankdebug launch``'s refusal to start a job whose script is missing."""

from __future__ import annotations

import os
from pathlib import Path

from rankdebug.command.plan import Entry


def script_target(entry: Entry | None) -> str | None:
    """The entry script as written, when it is a plain path worth looking up (not a
    module, not a glob, not an option)."""
    if entry is None or entry.kind != "script":
        return None
    target = entry.target.value
    if not target or any(ch in target for ch in "*?[") or target.startswith("-"):
        return None
    return target


def script_path(target: str, cwd: Path) -> Path:
    path = Path(os.path.expanduser(target))
    return path if path.is_absolute() else cwd / path


def script_missing(target: str, cwd: Path) -> bool:
    """Whether ``target`` is not there; False when that cannot be told here (the working
    directory is not on this machine)."""
    try:
        return cwd.is_dir() and not script_path(target, cwd).exists()
    except OSError:
        return False


def where(target: str, cwd: Path) -> str:
    """`` in CWD`` for a relative target, for messages."""
    return "" if Path(os.path.expanduser(target)).is_absolute() else f" in {cwd}"

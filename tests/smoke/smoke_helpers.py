"""Planning and shrinking commands for the smoke tests (real plans, real files, no mocks)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import wire_check
from rankdebug.command import plan_argv, plan_file
from rankdebug.smoke import Change, Settings, Smoke, smoke

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "smoke"
# Variables a script may read ($HOME in verl's examples); any other stays unknown.
ENV = {"HOME": "/home/user", "PATH": os.environ.get("PATH", "")}


def of_command(command: str, cwd: Path, **settings: int | bool) -> Smoke:
    plan = plan_argv([command], caller_env=ENV, cwd=cwd, env_complete=False)
    return smoke(plan, cwd=cwd, settings=Settings(**settings))


def of_file(path: Path, line: int, cwd: Path, **settings: int | bool) -> Smoke:
    plan = plan_file(path, line, caller_env=ENV, cwd=cwd, env_complete=False)
    return smoke(plan, cwd=cwd, settings=Settings(**settings))


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def changed(result: Smoke, name: str) -> Change:
    found = [c for c in result.changes if c.name == name]
    assert found, f"no change of {name}; changes: {[c.name for c in result.changes]}"
    assert len(found) == 1, f"{name} changed twice: {found}"
    return found[0]


def unchanged(result: Smoke, name: str) -> None:
    assert all(c.name != name for c in result.changes), f"{name} changed: {result.changes}"


def digest(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` with its hash: the user's files must stay as they were."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def cli(*args: str, cwd: Path | None = None,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``rankdebug ARGS`` for real, in a subprocess; ``smoke --json``'s answer (or its
    ``--check`` lines) as declared (``protocol/smoke.py``)."""
    done = subprocess.run([sys.executable, "-m", "rankdebug", *args], cwd=cwd,
                          env={**os.environ, **(env or {})}, capture_output=True, text=True,
                          timeout=120, check=False)
    if args[:1] == ("smoke",) and "--json" in args and done.stdout.strip():
        lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
        assert wire_check.problem("smoke", lines) is None, lines
    return done

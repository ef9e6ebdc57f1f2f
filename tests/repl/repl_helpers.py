"""Driving ``rankdebug debug`` through a pipe: its transcript cut at each prompt."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCRIPTS = Path(__file__).resolve().parent / "scripts"
BIN = Path(sys.executable).parent
PROMPT = "(rankdebug) "


def env() -> dict[str, str]:
    out = dict(os.environ, OMP_NUM_THREADS="1")
    out["PATH"] = f"{BIN}{os.pathsep}{out.get('PATH', '')}"
    return out


def launcher(tmp: Path) -> str:
    """An executable that starts ``steps.py``'s ranks (plans as launcher "other", so the
    launcher process is not taken for a rank)."""
    path = tmp / "steps-launcher"
    path.write_text(f"#!/bin/sh\nexec {sys.executable} {SCRIPTS / 'steps.py'} launch \"$@\"\n")
    path.chmod(0o700)
    return str(path)


@dataclass
class Transcript:
    code: int
    out: str
    err: str
    head: list[str]  # before the first prompt
    blocks: list[tuple[str, list[str]]]  # (command, what it printed)

    def after(self, command: str, nth: int = 0) -> list[str]:
        """What the ``nth`` command typed as ``command`` printed."""
        hits = [lines for typed, lines in self.blocks if typed == command]
        assert len(hits) > nth, f"{command!r} not run:\n{self.out}\n{self.err[-3000:]}"
        return hits[nth]

    def one(self, command: str, nth: int = 0) -> str:
        return "\n".join(self.after(command, nth))


def cut(out: str) -> tuple[list[str], list[tuple[str, list[str]]]]:
    parts = out.split(PROMPT)
    blocks = []
    for part in parts[1:]:
        typed, _, rest = part.partition("\n")
        blocks.append((typed.strip(), [ln for ln in rest.splitlines() if ln.strip()]))
    return parts[0].splitlines(), blocks


def debug(args: list[str], commands: list[str], timeout: float = 240.0,
          extra_env: dict[str, str] | None = None) -> Transcript:
    """``rankdebug debug ARGS`` with ``commands`` piped in (stdin closes after them; a lone
    surrogate such as "\\udcff" is sent as that raw byte)."""
    typed = "".join(c + "\n" for c in commands).encode("utf-8", "surrogateescape")
    proc = subprocess.run([sys.executable, "-m", "rankdebug", "debug", *args],
                          input=typed, capture_output=True, timeout=timeout, cwd=SCRIPTS,
                          env={**env(), **(extra_env or {})}, check=False)
    out, err = proc.stdout.decode(errors="replace"), proc.stderr.decode(errors="replace")
    head, blocks = cut(out)
    return Transcript(proc.returncode, out, err, head, blocks)


def registry_job(job: str) -> dict[str, Any] | None:
    from rankdebug.runtime import registry

    return registry.read_job(job)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with contextlib.suppress(OSError), open(f"/proc/{pid}/stat") as f:
        return f.read().split(")")[-1].split()[0] != "Z"
    return True


def wait_for(what: str, check: Any, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def job_of(t: Transcript) -> str:
    line = next(ln for ln in t.head + t.out.splitlines() if ln.startswith(("job ", "attached")))
    return line.split("job ", 1)[1].split(":", 1)[0]


def listening(proc: subprocess.Popen[str], count: int, timeout: float = 120.0
              ) -> tuple[str, list[dict[str, Any]]]:
    """The job id and ``count`` listening events of a ``rankdebug launch --json`` child."""
    assert proc.stdout is not None
    job, seen = "", []
    deadline = time.monotonic() + timeout
    while len(seen) < count and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        event = json.loads(line)
        if event.get("event") == "job":
            job = event["job"]
        elif event.get("event") == "listening":
            seen.append(event)
    assert len(seen) == count, f"only {seen} listened"
    return job, seen


def tool(name: str) -> str:
    """An executable of this venv (torchrun), else the name (found on PATH)."""
    path = BIN / name
    return str(path) if path.exists() else name


def line_of(script: str, tag: str) -> int:
    """1-based line of ``script`` (in scripts/) tagged ``# TAG``."""
    for n, text in enumerate((SCRIPTS / script).read_text().splitlines(), 1):
        if text.rstrip().endswith(f"# {tag}"):
            return n
    raise AssertionError(f"no # {tag} in {script}")

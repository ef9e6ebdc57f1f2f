"""Which GPU each process uses, from ``nvidia-smi`` when the machine has it.

Nothing breaks without it: :func:`usage` returns None where ``nvidia-smi`` is absent.
"""

from __future__ import annotations

import shutil
from typing import Any

TIMEOUT_S = 5.0


class GPUError(Exception):
    """nvidia-smi is there but did not answer."""


def _query(exe: str, what: str, kind: str) -> list[list[str]]:
    import subprocess  # only where nvidia-smi is: every `rankdebug jobs` would load it

    try:
        out = subprocess.run(
            [exe, f"--query-{kind}={what}", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=TIMEOUT_S, check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise GPUError(f"nvidia-smi: {exc}") from exc
    if out.returncode != 0:
        raise GPUError(f"nvidia-smi: {(out.stderr or out.stdout).strip()[:200]}")
    return [[c.strip() for c in line.split(",")] for line in out.stdout.splitlines()
            if line.strip()]


def usage() -> dict[int, list[dict[str, Any]]] | None:
    """pid -> [{"index", "uuid", "memory_mib"}] for every process on a GPU; None without
    nvidia-smi."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    index = {row[1]: int(row[0]) for row in _query(exe, "index,uuid", "gpu")
             if len(row) >= 2 and row[0].isdigit()}
    out: dict[int, list[dict[str, Any]]] = {}
    for row in _query(exe, "pid,gpu_uuid,used_memory", "compute-apps"):
        if len(row) < 3 or not row[0].isdigit():
            continue
        mem = int(row[2]) if row[2].isdigit() else None
        out.setdefault(int(row[0]), []).append(
            {"index": index.get(row[1]), "uuid": row[1], "memory_mib": mem})
    return out

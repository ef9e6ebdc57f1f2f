"""Config files a command names (a torchtitan TOML, an accelerate YAML), read small and
never trusted: a file that is missing, huge or unreadable is no layout, not an error."""

from __future__ import annotations

import re
from pathlib import Path

MAX_BYTES = 1 << 20


def read_text(path: str, cwd: str | None) -> tuple[str, str] | None:
    """(path as shown, text) of ``path`` resolved against ``cwd``, or None."""
    p = Path(path).expanduser()
    if not p.is_absolute():
        if cwd is None:
            return None
        p = Path(cwd) / p
    try:
        if not p.is_file() or p.stat().st_size > MAX_BYTES:
            return None
        return str(p), p.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def line_of(text: str, key: str, section: str | None = None) -> int | None:
    """The 1-based line where ``key =`` / ``key:`` is set (inside ``[section]`` for TOML)."""
    inside = section is None
    pattern = re.compile(rf"^\s*{re.escape(key)}\s*[=:]")
    for number, line in enumerate(text.splitlines(), 1):
        head = line.strip()
        if section is not None and head.startswith("["):
            inside = head.split("#")[0].strip() == f"[{section}]"
            continue
        if inside and pattern.match(line):
            return number
    return None

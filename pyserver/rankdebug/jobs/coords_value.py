"""A rank's parallel coordinates as the registry and the handler give them, checked
(``valid``) and written for people (``text``); ``job_coords`` asks and resolves them."""

from __future__ import annotations

import re
from typing import Any

MAX_DIMS = 16
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,39}")


def valid(value: object, order: object = None) -> dict[str, int] | None:
    """``value`` as coordinates ({name: index >= 0}, 1 to ``MAX_DIMS`` names), else None;
    in ``order`` (a list of the names: the registry sorts an entry's keys) where it names
    each of them once."""
    if not isinstance(value, dict) or not 0 < len(value) <= MAX_DIMS:
        return None
    out: dict[str, int] = {}
    for name, index in value.items():
        if not (isinstance(name, str) and _NAME.fullmatch(name) and isinstance(index, int)
                and not isinstance(index, bool) and 0 <= index < 1 << 31):
            return None
        out[name] = index
    if (isinstance(order, list) and len(order) == len(out)
            and all(isinstance(name, str) for name in order) and set(order) == set(out)):
        return {name: out[name] for name in order}
    return out



def text(coords: dict[str, Any] | None) -> str:
    """``dp 1 · tp 3`` (empty for none)."""
    return " · ".join(f"{name} {index}" for name, index in (coords or {}).items())

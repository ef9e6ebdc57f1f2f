"""Reading the config files a command names (YAML, JSON, TOML) and writing changed copies.

A file that cannot be read is None: the knobs in it are then reported as not found."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import yaml

MAX_BYTES = 4 << 20


def read_text(path: Path, errors: str = "strict") -> str | None:
    """The file's text; None when it is not a readable file here (or larger than
    ``MAX_BYTES``, or not UTF-8 with ``errors="strict"``)."""
    try:
        if not path.is_file() or path.stat().st_size > MAX_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors=errors)
    except (OSError, UnicodeDecodeError):
        return None


def load(path: Path) -> dict[str, Any] | None:
    """A mapping from a YAML, JSON or TOML file, by its suffix."""
    text = read_text(path)
    if text is None:
        return None
    try:
        if path.suffix == ".toml":
            if sys.version_info < (3, 11):
                return None  # tomllib is 3.11+; the knobs are then reported as not found
            import tomllib

            data: object = tomllib.loads(text)
        elif path.suffix == ".json":
            data = json.loads(text)
        else:
            data = yaml.safe_load(text)
    except (ValueError, yaml.YAMLError):
        return None
    return data if isinstance(data, dict) else None


def dump(data: dict[str, Any], suffix: str, header: str) -> str:
    """The copy's text; ``header`` says where it came from (as a comment where the format
    has comments, as a ``_comment`` key nowhere: JSON readers may refuse unknown keys)."""
    if suffix == ".json":
        return json.dumps(data, indent=2) + "\n"
    if suffix == ".toml":
        return f"# {header}\n" + toml_text(data)
    body = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    return f"# {header}\n{body}"


def lookup(data: dict[str, Any], key: str) -> tuple[bool, Any]:
    """(whether ``data`` holds ``a.b``, ``data["a"]["b"]`` or None)."""
    node: Any = data
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return False, None
        node = node[part]
    return True, node


def dotted(data: dict[str, Any], key: str) -> Any:
    """``data["a"]["b"]`` for ``a.b``; None when a level is missing."""
    return lookup(data, key)[1]


def set_dotted(data: dict[str, Any], key: str, value: Any) -> None:
    node = data
    *parents, last = key.split(".")
    for part in parents:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[last] = value


def toml_text(data: dict[str, Any]) -> str:
    """TOML for what configs hold: tables of scalars, lists and inline tables (the standard
    library reads TOML but does not write it)."""
    out: list[str] = []

    def table(node: dict[str, Any], path: list[str]) -> None:
        plain = {k: v for k, v in node.items() if not isinstance(v, dict)}
        if path and (plain or not node):
            out.append(f"\n[{'.'.join(_toml_key(p) for p in path)}]")
        out.extend(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in plain.items())
        for k, v in node.items():
            if isinstance(v, dict):
                table(v, [*path, k])

    table(data, [])
    return "\n".join(out).lstrip("\n") + "\n"


def _toml_key(key: str) -> str:
    return key if key.replace("_", "").replace("-", "").isalnum() else json.dumps(key)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        if math.isnan(value):
            return "nan"
        return repr(value) if not math.isinf(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}"
                               for k, v in value.items()) + "}"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(str(value))  # dates and times: written as text

"""The ``paths`` stage: the data, model and config paths a command names exist here. A hub
id (``Qwen/Qwen2-7B``, ``gpt2``) is reported with whether the local cache has it; nothing is
ever downloaded."""

from __future__ import annotations

import os
from pathlib import Path

from rankdebug.command.entry import script_path, where
from rankdebug.smoke.base import looks_like_hub_id
from rankdebug.smoke.model import Input


def hub_cache(env: dict[str, str]) -> Path:
    if env.get("HF_HUB_CACHE"):
        return Path(env["HF_HUB_CACHE"])
    home = env.get("HF_HOME") or os.path.join(env.get("XDG_CACHE_HOME") or
                                              os.path.expanduser("~/.cache"), "huggingface")
    return Path(home) / "hub"


def _cached(item: Input, env: dict[str, str]) -> bool:
    kind = "datasets" if item.kind == "data" else "models"
    return (hub_cache(env) / f"{kind}--{item.value.replace('/', '--')}").is_dir()


def check(inputs: list[Input], cwd: Path, env: dict[str, str]) -> tuple[str, bool, str]:
    found: list[str] = []
    hub: list[str] = []
    unknown: list[str] = []
    for item in inputs:
        if "$" in item.value or "`" in item.value:
            unknown.append(item.value)
            continue
        if item.kind == "data-prefix":
            missing = [s for s in (".bin", ".idx") if not script_path(item.value + s, cwd).exists()]
            if missing:
                return "paths", False, (f"data {item.value}{' and '.join(missing)} "
                                        f"({item.where}) does not exist")
            found.append(item.value)
            continue
        path = script_path(item.value, cwd)
        if path.exists():
            found.append(item.value)
        elif item.hub and looks_like_hub_id(item.value):
            state = ("in the local cache" if _cached(item, env)
                     else "not in the local cache: the run will download it")
            hub.append(f"{item.value} ({item.where}) is a hub id, {state}")
        else:
            return "paths", False, (f"{item.kind} {item.value} ({item.where}) does not exist"
                                    f"{where(item.value, cwd)}")
    parts = []
    if found:
        parts.append(f"{len(found)} path{'s' if len(found) != 1 else ''} exist"
                     f"{'s' if len(found) == 1 else ''}: {', '.join(found)}")
    parts += hub
    if unknown:
        parts.append(f"not known here, not checked: {', '.join(unknown)}")
    return "paths", True, "; ".join(parts) or "the command names no data, model or config path"

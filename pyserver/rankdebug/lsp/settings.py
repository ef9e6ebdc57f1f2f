"""Settings, as the extension sends them: ``initializationOptions`` and
``workspace/didChangeConfiguration`` (the flow of microsoft/vscode-python-tools-extension-template).

``initializationOptions = {"settings": [per folder, each with "workspace": URI] or one
object, "globalSettings": {...}}``. A configuration change may carry the same shape, a
``{"rankdebug": {...}}`` section, or nothing (the server then asks with
``workspace/configuration``). Keys are camelCase; unknown keys are ignored and bad
values fall back to the defaults, each reported once in the log.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import attrs
from pygls import uris

from rankdebug.debugplan.options import DEFAULT_HANG_S, STOP_MODES, LaunchOptions, StopMode
from rankdebug.ssh import is_host

SECTION = "rankdebug"

UnknownValues = Literal["off", "hint", "info", "warning"]
Notifications = Literal["off", "onError", "onWarning", "always"]
AttachOn = Literal["start", "hit"]


@attrs.frozen
class Settings:
    """One workspace folder's settings (defaults when nothing is configured)."""

    # The folder these apply to (file system path); None for the global defaults.
    workspace: str | None = None
    enable: bool = True
    code_lens: bool = True
    diagnostics: bool = True
    # Where relative paths in commands resolve; ${workspaceFolder}, ${fileDirname} allowed.
    cwd: str = "${workspaceFolder}"
    # Variables the scripts are run with (added to the server's own when inherit_env).
    env: Mapping[str, str] = attrs.field(factory=dict)
    inherit_env: bool = False
    # What runs the rankdebug CLI: a Python (then `-m rankdebug` is added), or a whole
    # argv prefix such as [python, /path/to/rankdebug_main.py] or [python, -m, rankdebug].
    interpreter: tuple[str, ...] = (sys.executable,)
    host: str = "127.0.0.1"
    base_port: int = 0
    # First port of the per-rank debugpy attach configurations written to launch.json.
    debugpy_base_port: int = 5678
    collective_timeout: float | None = None
    # Seconds without progress before a job started from here is said to hang (0: off).
    hang_seconds: float = DEFAULT_HANG_S
    wait: bool = True
    attach_on: AttachOn = "hit"
    # together: when a chosen rank stops, the other chosen ranks are paused too.
    stop_ranks: StopMode = "together"
    # A multi-node job's other nodes, reached over SSH (``rankdebug launch --hosts``).
    hosts: tuple[str, ...] = ()
    ssh_config: str = ""
    # How "this value is not known here" findings show: they are not mistakes.
    unknown_values: UnknownValues = "hint"
    show_notifications: Notifications = "off"
    # Documents larger than this are not analysed (bytes of UTF-8).
    max_document_bytes: int = 16 << 20

    def resolve_cwd(self, document_path: str | None) -> Path | None:
        """The working directory for a document's commands, variables substituted."""
        folder = self.workspace
        doc_dir = os.path.dirname(document_path) if document_path else None
        text = self.cwd or "${workspaceFolder}"
        if "${workspaceFolder}" in text:
            base = folder or doc_dir
            if base is None:
                return None
            text = text.replace("${workspaceFolder}", base)
        if "${fileDirname}" in text:
            if doc_dir is None:
                return None
            text = text.replace("${fileDirname}", doc_dir)
        if "${" in text:
            return None
        path = Path(os.path.expanduser(text))
        if not path.is_absolute():
            base = folder or doc_dir
            if base is None:
                return None
            path = Path(base) / path
        return path

    def cli(self) -> list[str]:
        """The argv prefix that runs ``rankdebug`` (a verb follows)."""
        if len(self.interpreter) == 1:
            return [self.interpreter[0], "-m", "rankdebug"]
        return list(self.interpreter)

    def caller_env(self) -> tuple[dict[str, str] | None, bool]:
        """The environment commands are planned with, and whether it is the whole of it.

        With ``inheritEnv`` it is this process's environment plus ``env`` (whole); else just
        ``env`` (partial: other variables stay unknown), or nothing known at all."""
        if self.inherit_env:
            return {**os.environ, **self.env}, True
        return (dict(self.env), False) if self.env else (None, False)

    def launch_options(self, *, arm: bool = False, breaks: Sequence[str] = (),
                       base_port: int | None = None) -> LaunchOptions:
        """How ``rankdebug launch`` runs a job started from the editor with these settings."""
        return LaunchOptions(
            host=self.host,
            base_port=self.base_port if base_port is None else base_port,
            wait=self.wait,
            collective_timeout=self.collective_timeout,
            attach="start" if self.attach_on == "start" else "auto",
            arm=arm,
            breaks=tuple(breaks),
            stop=self.stop_ranks,
            hosts=self.hosts,
            ssh_config=self.ssh_config or None,
            hang_seconds=self.hang_seconds,
        )

    def run_env(self) -> dict[str, str]:
        """The environment a job started from here runs in (`rankdebug launch` inherits ours)."""
        return {**os.environ, **self.env}


# camelCase key -> (attribute, converter); converters raise ValueError/TypeError on bad input.
def _bool(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    raise TypeError("expected true or false")


def _str(v: Any) -> str:
    if isinstance(v, str):
        return v
    raise TypeError("expected a string")


def _port(v: Any) -> int:
    if isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 65535:
        return v
    raise ValueError("expected a port number (0-65535)")


def _positive(v: Any) -> int:
    if isinstance(v, int) and not isinstance(v, bool) and v > 0:
        return v
    raise ValueError("expected a positive integer")


def _timeout(v: Any) -> float | None:
    if v is None:
        return None
    if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0:
        return float(v)
    raise ValueError("expected seconds (a number >= 0) or null")


def _hang(v: Any) -> float:
    if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) \
            and (v == 0 or v >= 1):
        return float(v)
    raise ValueError("expected 0 (off) or at least 1 second")


def _env(v: Any) -> dict[str, str]:
    if isinstance(v, Mapping) and all(isinstance(k, str) and isinstance(x, str)
                                      for k, x in v.items()):
        return dict(v)
    raise TypeError("expected an object of strings")


def _argv(v: Any) -> tuple[str, ...]:
    if isinstance(v, str) and v:
        return (v,)
    if isinstance(v, list) and v and all(isinstance(x, str) and x for x in v):
        return tuple(v)
    raise TypeError("expected a non-empty list of strings")


def _hosts(v: Any) -> tuple[str, ...]:
    if isinstance(v, list) and all(isinstance(x, str) and is_host(x.strip()) for x in v):
        return tuple(x.strip() for x in v)
    raise TypeError("expected a list of host names")


def _choice(*allowed: str) -> Callable[[Any], str]:
    def convert(v: Any) -> str:
        if v in allowed:
            return str(v)
        raise ValueError("expected one of " + ", ".join(allowed))

    return convert


_FIELDS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "enable": ("enable", _bool),
    "codeLens": ("code_lens", _bool),
    "diagnostics": ("diagnostics", _bool),
    "cwd": ("cwd", _str),
    "env": ("env", _env),
    "inheritEnv": ("inherit_env", _bool),
    "interpreter": ("interpreter", _argv),
    "host": ("host", _str),
    "basePort": ("base_port", _port),
    "debugpyBasePort": ("debugpy_base_port", _port),
    "collectiveTimeout": ("collective_timeout", _timeout),
    "hangSeconds": ("hang_seconds", _hang),
    "wait": ("wait", _bool),
    "attachOn": ("attach_on", _choice("start", "hit")),
    "stopRanks": ("stop_ranks", _choice(*STOP_MODES)),
    "hosts": ("hosts", _hosts),
    "sshConfig": ("ssh_config", _str),
    "unknownValues": ("unknown_values", _choice("off", "hint", "info", "warning")),
    "showNotifications": ("show_notifications",
                          _choice("off", "onError", "onWarning", "always")),
    "maxDocumentBytes": ("max_document_bytes", _positive),
}


def apply(base: Settings, raw: Mapping[str, Any], problems: list[str]) -> Settings:
    """``base`` with the recognised keys of ``raw``; bad values are skipped and described."""
    changes: dict[str, Any] = {}
    for key, value in raw.items():
        entry = _FIELDS.get(key)
        if entry is None or (value is None and key != "collectiveTimeout"):
            continue
        name, convert = entry
        try:
            changes[name] = convert(value)
        except (TypeError, ValueError) as exc:
            problems.append(f"setting {SECTION}.{key}: {exc}; using {getattr(base, name)!r}")
    return attrs.evolve(base, **changes) if changes else base


class SettingsStore:
    """Global settings plus per-folder overrides; the folder holding a document wins."""

    def __init__(self) -> None:
        self.global_settings = Settings()
        self.folders: dict[str, Settings] = {}
        self._global_raw: dict[str, Any] = {}
        self._folder_raw: dict[str, dict[str, Any]] = {}
        self._known: set[str] = set()

    def update(self, payload: Any, problems: list[str]) -> bool:
        """Take a payload of any accepted shape; False when it holds no settings."""
        if not isinstance(payload, Mapping):
            return False
        if "settings" in payload or "globalSettings" in payload:
            glob = payload.get("globalSettings")
            if isinstance(glob, Mapping):
                self._global_raw = dict(glob)
            per = payload.get("settings")
            if isinstance(per, Mapping):
                per = [per]
            if isinstance(per, list):
                self._folder_raw = {}
                for item in per:
                    if not isinstance(item, Mapping):
                        continue
                    folder = _folder_path(item.get("workspace"))
                    if folder is None:
                        self._global_raw = {**self._global_raw, **item}
                    else:
                        self._folder_raw[folder] = dict(item)
            self._rebuild(problems)
            return True
        section = payload.get(SECTION)
        if isinstance(section, Mapping):
            self._global_raw = dict(section)
            self._rebuild(problems)
            return True
        if any(key in _FIELDS for key in payload):
            self._global_raw = dict(payload)
            self._rebuild(problems)
            return True
        return False

    @property
    def configured(self) -> bool:
        """Whether any settings came from the client."""
        return bool(self._global_raw or self._folder_raw)

    def _rebuild(self, problems: list[str]) -> None:
        self.global_settings = apply(Settings(), self._global_raw, problems)
        self.folders = {
            folder: attrs.evolve(
                apply(self.global_settings, self._folder_raw.get(folder, {}), problems),
                workspace=folder,
            )
            for folder in sorted(self._known | set(self._folder_raw))
        }

    def add_folder(self, path: str) -> None:
        """A workspace folder (from ``initialize`` or a change); global settings apply there."""
        self._known.add(path)
        if path not in self.folders:
            self.folders[path] = attrs.evolve(self.global_settings, workspace=path)

    def remove_folder(self, path: str) -> None:
        self._known.discard(path)
        self._folder_raw.pop(path, None)
        self.folders.pop(path, None)

    def for_path(self, path: str | None) -> Settings:
        """Settings for a document: its innermost workspace folder's, else the global ones."""
        if path:
            best: str | None = None
            for folder in self.folders:
                if (path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)) and (
                    best is None or len(folder) > len(best)
                ):
                    best = folder
            if best is not None:
                return self.folders[best]
        return self.global_settings


def _folder_path(uri: Any) -> str | None:
    if not isinstance(uri, str) or not uri:
        return None
    if "://" not in uri:
        return uri
    return uris.to_fs_path(uri)

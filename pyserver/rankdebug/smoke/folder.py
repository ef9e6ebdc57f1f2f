"""The private folder a smoke run's config copies and outputs go to.

Beside the job registry (runtime/registry.py) and chosen the same way, but its own folder:
``$XDG_RUNTIME_DIR/rankdebug-smoke`` (when that is this user's) or
``/tmp/rankdebug-smoke-$UID``, then one folder per command. Every level is 0700 and must be a
real folder of this user's: a planted folder or link is refused, never written into.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from pathlib import Path

from rankdebug.errors import BadInput


def base() -> Path:
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    uid = os.getuid()
    if runtime and os.path.isdir(runtime) and os.stat(runtime).st_uid == uid:
        return Path(runtime) / "rankdebug-smoke"
    return Path("/tmp") / f"rankdebug-smoke-{uid}"


def private_dir(path: Path) -> Path:
    """Create ``path`` 0700, or accept it only as a real folder of this user's."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise BadInput(f"{path} is not a folder of yours; rankdebug will not write there")
    if info.st_uid != os.getuid():
        raise BadInput(f"{path} belongs to uid {info.st_uid}, not to you; "
                       "rankdebug will not write there (remove it)")
    if stat.S_IMODE(info.st_mode) != 0o700:
        os.chmod(path, 0o700)
    return path


def key(*parts: object) -> str:
    """A short name for one command: the same command gets the same folder back, so the
    editor's diff shows stable paths."""
    text = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


class Folder:
    """One command's folder, created on first use."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._path: Path | None = None

    @property
    def path(self) -> Path:
        if self._path is None:
            self._path = private_dir(private_dir(base()) / self.name)
        return self._path

    def holds(self, path: Path) -> bool:
        """Whether ``path`` is in this folder (a copy made already); creates nothing."""
        return path.is_relative_to(self._path or base() / self.name)

    def write(self, filename: str, text: str, *, under: str | None = None) -> Path:
        """Write ``filename`` whole (temporary file + rename), mode 0600; in the private
        subfolder ``under`` when given."""
        target = (self.subdir(under) if under else self.path) / Path(filename).name
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, target)
        return target

    def subdir(self, name: str) -> Path:
        return private_dir(self.path / name)

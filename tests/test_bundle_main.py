"""The extension's entry script (extension/python/rankdebug_main.py) with a bundle beside it:
the language server's start compiles the bundle's bytecode once, in the background."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

MAIN = Path(__file__).resolve().parents[1] / "extension" / "python" / "rankdebug_main.py"


def _extension(tmp: Path) -> tuple[Path, Path]:
    """A copy of the entry script in an extension's layout, with a bundle of one module."""
    script = tmp / "ext" / "extension" / "python" / "rankdebug_main.py"
    script.parent.mkdir(parents=True)
    shutil.copy(MAIN, script)
    libs = tmp / "ext" / "dist" / "bundled" / "libs"
    (libs / "somepkg").mkdir(parents=True)
    (libs / "somepkg" / "__init__.py").write_text("")
    (libs / "somepkg" / "mod.py").write_text("VALUE = 1\n")
    return script, libs


def _start_server(script: Path) -> None:
    # stdin at its end: the server stops at once; the compile goes on in its own session.
    subprocess.run([sys.executable, str(script), "server"], stdin=subprocess.DEVNULL,
                   capture_output=True, timeout=60, check=False)


def test_server_start_compiles_the_bundle_once(tmp_path: Path) -> None:
    script, libs = _extension(tmp_path)
    tag = sys.implementation.cache_tag
    marker = libs / f".compiled-{tag}"
    _start_server(script)
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert marker.exists()
    assert (libs / "somepkg" / "__pycache__" / f"mod.{tag}.pyc").is_file()


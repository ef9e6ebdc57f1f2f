"""A job's boot folder, made in its registry folder before the job starts: what
``debugplan.job_env`` puts first on the job's PYTHONPATH. The plan says what the job runs;
this is the file work that makes the places it names."""

from __future__ import annotations

import shutil
from pathlib import Path

from rankdebug.packages import package_dir

PACKAGE = Path(__file__).resolve().parent.parent  # the rankdebug package


def prepare_boot_dir(boot: Path) -> tuple[Path, Path]:
    """Fill ``boot`` (private, created here): ``sitecustomize.py`` (the bootstrap), a link to
    the ``rankdebug`` package, and ``dbg/debugpy``, a link the chosen ranks alone put on
    sys.path. Returns (folder for PYTHONPATH, folder holding debugpy)."""
    boot.mkdir(mode=0o700, parents=True, exist_ok=True)
    shutil.copyfile(PACKAGE / "runtime" / "bootstrap.py", boot / "sitecustomize.py")
    (boot / "rankdebug").symlink_to(PACKAGE, target_is_directory=True)
    dbg = boot / "dbg"
    dbg.mkdir(mode=0o700)
    (dbg / "debugpy").symlink_to(package_dir("debugpy"), target_is_directory=True)
    return boot, dbg

"""Fills dist/bundled/libs with what the extension's Python side needs, so that the user's
environment needs nothing installed (the python-tools extension template's bundled/libs):

- the rankdebug package (pyserver/rankdebug, without caches);
- its dependencies, copied file by file from this environment's installed distributions;
- debugpy made pure Python (its compiled speed-ups dropped: pydevd falls back to its
  Python tracer), except the small Linux helper gdb loads to attach to a running process
  (`rankdebug attach --pid`, Attach in the Training Jobs view: 20 KB);
- tree-sitter's compiled binding for every CPython 3.10-3.14 (abi-specific file names sit
  side by side), fetched with pip when this Python's own is not enough.

Run with the project's virtual environment: python extension/bundle_python.py
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import zipfile
from importlib.metadata import distribution
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "dist" / "bundled" / "libs"
DISTS = ["pygls", "lsprotocol", "attrs", "cattrs", "typing_extensions", "tree-sitter",
         "tree-sitter-bash", "debugpy", "PyYAML"]
PURE_ONLY = {"debugpy", "PyYAML"}  # drop compiled files: both run without them
BINARY = (".so", ".pyd", ".dll", ".dylib", ".exe", ".pdb", ".lib")
# Compiled files kept all the same: what gdb injects into a running rank (rankdebug.jobs.attach).
KEEP_BINARY = ("pydevd_attach_to_process/attach_linux_amd64.so",)
# Sources of compiled parts and Windows-only helpers: never imported here.
SKIP_SUFFIXES = (".c", ".cpp", ".h", ".hpp", ".pyx", ".pxd", ".pyi.in")
SKIP_PARTS = ("/winappdbg/", "/tests/", "/windows/")
EXTRA_PYTHONS = ["3.10", "3.11", "3.12", "3.13", "3.14"]


def copy_dist(name: str) -> int:
    dist = distribution(name)
    count = 0
    for f in dist.files or []:
        rel = str(f)
        if rel.startswith("..") or "__pycache__" in rel or ".dist-info" in rel:
            continue
        if name in PURE_ONLY and rel.endswith(BINARY) and not rel.endswith(KEEP_BINARY):
            continue
        if rel.endswith(SKIP_SUFFIXES) or any(part in "/" + rel for part in SKIP_PARTS):
            continue
        src = Path(str(dist.locate_file(f)))
        if not src.is_file():
            continue
        dst = OUT / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)
        count += 1
    return count


def extra_bindings() -> None:
    """tree-sitter's binding for other CPython versions (best effort)."""
    version = distribution("tree-sitter").version
    with tempfile.TemporaryDirectory() as tmp:
        for py in EXTRA_PYTHONS:
            if py == f"{sys.version_info[0]}.{sys.version_info[1]}":
                continue
            cmd = [sys.executable, "-m", "pip", "download", "-q", f"tree-sitter=={version}",
                   "--only-binary", ":all:", "--no-deps", "--implementation", "cp",
                   "--python-version", py, "--platform", "manylinux2014_x86_64",
                   "--platform", "manylinux_2_17_x86_64", "--platform", "manylinux_2_28_x86_64",
                   "-d", tmp]
            if subprocess.run(cmd, capture_output=True, timeout=300).returncode != 0:
                print(f"bundle: no tree-sitter {version} wheel for Python {py}", file=sys.stderr)
        for wheel in Path(tmp).glob("*.whl"):
            with zipfile.ZipFile(wheel) as z:
                for member in z.namelist():
                    if member.startswith("tree_sitter/") and member.endswith(".so"):
                        (OUT / member).write_bytes(z.read(member))
    if sys.version_info < (3, 11):
        return
    with tempfile.TemporaryDirectory() as tmp:  # exceptiongroup: cattrs needs it on 3.10
        cmd = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", tmp,
               "exceptiongroup"]
        if subprocess.run(cmd, capture_output=True, timeout=300).returncode == 0:
            src = Path(tmp) / "exceptiongroup"
            if src.is_dir():
                shutil.copytree(src, OUT / "exceptiongroup", dirs_exist_ok=True,
                                ignore=shutil.ignore_patterns("__pycache__"))


def main() -> int:
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    shutil.copytree(ROOT / "pyserver" / "rankdebug", OUT / "rankdebug",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in DISTS:
        print(f"bundle: {name}: {copy_dist(name)} files", file=sys.stderr)
    extra_bindings()
    size = sum(p.stat().st_size for p in OUT.rglob("*") if p.is_file())
    print(f"bundle: {OUT.relative_to(ROOT)}: {size / 1e6:.1f} MB", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A registry on a disk that is full or read-only: ``rankdebug launch`` says so in one line
and leaves nothing; what a failed write left is pruned by the next launch; a job stopped
while its registry turned read-only says what it could not do, not that it was "killed
outright". The registry lives on a small tmpfs of the test's own (mounting needs root, as
CI has)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from launch_helpers import SCRIPTS, Launch, wait_for


@pytest.fixture
def small_disk() -> Iterator[Path]:
    """A 256 KiB tmpfs, the XDG_RUNTIME_DIR of the launches below (a short path: a job's
    socket paths must fit)."""
    where = Path(tempfile.mkdtemp(prefix="rdq", dir="/tmp"))
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs",
                           str(where)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {done.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)
        shutil.rmtree(where, ignore_errors=True)


def _fill(disk: Path) -> None:
    with contextlib.suppress(OSError), open(disk / "filler", "wb") as f:
        while True:
            f.write(b"x" * 4096)
            f.flush()


def _launch(disk: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, XDG_RUNTIME_DIR=str(disk))
    return subprocess.run([sys.executable, "-m", "rankdebug", "launch", *args, "--", "python",
                           str(SCRIPTS / "single.py")], capture_output=True, text=True,
                          env=env, timeout=120, check=False)


def _left(disk: Path) -> list[str]:
    return sorted(str(p.relative_to(disk)) for p in disk.rglob("*")
                  if p.name not in ("filler", ".ports.lock", "rankdebug"))


@pytest.mark.timeout(180)
def test_a_full_registry_is_one_line_and_leaves_nothing(small_disk: Path) -> None:
    (small_disk / "rankdebug").mkdir(mode=0o700)
    _fill(small_disk)
    for args in (["--json"], []):
        done = _launch(small_disk, *args)
        assert done.returncode == 2, (done.stdout, done.stderr)
        assert "Traceback" not in done.stderr, done.stderr
        text = json.loads(done.stdout)["error"]["message"] if args else done.stderr
        assert "cannot write the job registry" in text, text
        assert "No space left on device" in text, text
        assert _left(small_disk) == [], _left(small_disk)


@pytest.mark.timeout(180)
def test_a_read_only_registry_is_one_line(small_disk: Path) -> None:
    (small_disk / "rankdebug").mkdir(mode=0o700)
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    done = _launch(small_disk, "--json")
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    message = json.loads(done.stdout)["error"]["message"]
    assert "cannot write the job registry" in message and "Read-only" in message, message


@pytest.mark.timeout(180)
def test_what_a_failed_write_left_is_pruned(small_disk: Path) -> None:
    """A job folder holding only a half-written entry (a launch whose disk filled up) is
    removed by the next launch once it is a minute old; a fresh one is left alone."""
    registry = small_disk / "rankdebug"
    registry.mkdir(mode=0o700)
    old, fresh = registry / "20260101-000000-1", registry / "20260101-000001-2"
    for folder in (old, fresh):
        folder.mkdir(mode=0o700)
        (folder / "job.json.1.tmp").write_text('{"job": ')
    past = time.time() - 3600
    os.utime(old / "job.json.1.tmp", (past, past))
    os.utime(old, (past, past))
    done = _launch(small_disk, "--json", "--ranks", "0", "--no-wait")
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert not old.exists()
    assert fresh.exists()


@pytest.mark.timeout(180)
def test_a_job_stopped_while_its_registry_is_read_only_says_so(small_disk: Path,
                                                                 tmp_path: Path) -> None:
    launch = Launch(["--ranks", "0", "--no-wait", "--", "python", str(SCRIPTS / "loop.py")],
                    tmp_path, env={"XDG_RUNTIME_DIR": str(small_disk)})
    try:
        launch.event("listening")
        subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
        launch.signal()
        launch.wait(60)
        wait_for("the janitor to end", lambda: not _janitors(), 30)
        text = launch.stderr_path.read_text()
        assert "killed outright" not in text, text
        assert "could not remove the job's registry folder" in text, text
    finally:
        launch.close()


def _janitors() -> list[str]:
    out = subprocess.run(["pgrep", "-f", "rankdebug.supervise.janitor"], capture_output=True,
                         text=True, check=False).stdout
    return out.split()


@pytest.mark.timeout(180)
def test_a_runtime_folder_too_long_for_sockets_is_one_line(tmp_path: Path) -> None:
    """An XDG_RUNTIME_DIR whose path leaves no room for a job's sockets (107 bytes): one
    line that says so and what to do (it stopped in a traceback, 'AF_UNIX path too long')."""
    deep = tmp_path / ("x" * 60)
    deep.mkdir(mode=0o700)
    done = _launch(deep, "--json", "--ranks", "0", "--no-wait")
    assert done.returncode == 2, (done.stdout, done.stderr)
    message = json.loads(done.stdout)["error"]["message"]
    assert "too long for a job's sockets" in message and "XDG_RUNTIME_DIR" in message, message
    assert _left(deep) == [], _left(deep)  # no job folder (the registry's lock file stays)

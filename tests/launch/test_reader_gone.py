"""``rankdebug launch --json`` whose reader goes away (an editor that closed, a script that
died) ends the job, as a reload of the editor does, instead of running on as an orphan; with
its output sent to a file it runs on (the README's way to detach)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from launch_helpers import BIN, SCRIPTS, job_processes, wait_for


def _start(tmp: Path, stdout: int) -> subprocess.Popen[bytes]:
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    return subprocess.Popen(
        [sys.executable, "-m", "rankdebug", "launch", "--json", "--ranks", "0", "--no-wait",
         "--", "python", str(SCRIPTS / "loop.py")],
        stdout=stdout, stderr=open(tmp / "stderr", "wb"), cwd=SCRIPTS, env=env)


@pytest.mark.timeout(120)
def test_the_job_ends_when_its_json_reader_is_gone(tmp_path: Path) -> None:
    launch = _start(tmp_path, subprocess.PIPE)
    try:
        assert launch.stdout is not None
        job = json.loads(launch.stdout.readline())["job"]
        while json.loads(launch.stdout.readline()).get("event") != "listening":
            pass
        assert job_processes(job)
        gone_at = time.monotonic()
        launch.stdout.close()  # the reader dies before any client attached
        code = launch.wait(30)
        took = time.monotonic() - gone_at
        stderr = (tmp_path / "stderr").read_text()
        print(f"reader gone -> launch ended in {took:.2f} s (exit {code})")
        assert code != 0
        assert "reading its --json output has gone" in stderr, stderr
        assert "Traceback" not in stderr and "BrokenPipe" not in stderr, stderr
        wait_for("the job's processes to end", lambda: not job_processes(job), 30)
    finally:
        launch.kill()


@pytest.mark.timeout(120)
def test_with_its_output_in_a_file_the_job_runs_on(tmp_path: Path) -> None:
    with open(tmp_path / "events", "wb") as out:
        launch = _start(tmp_path, out.fileno())
    try:
        wait_for("listening", lambda: b'"listening"' in (tmp_path / "events").read_bytes(), 60)
        time.sleep(2.0)
        assert launch.poll() is None
    finally:
        launch.terminate()
        launch.wait(30)

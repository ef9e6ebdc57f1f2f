"""``rankdebug launch`` started ahead (``RANKDEBUG_WARM``, rankdebug/warm.py): the launch
comes on a pipe and runs in that process with the launch's environment and folder; a bad
request is one line; EOF with nothing lets it go. Real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest


def _warm(request: bytes | None, tmp: Path) -> subprocess.CompletedProcess[str]:
    r, w = os.pipe()
    env = {**os.environ, "RANKDEBUG_WARM": str(r)}
    proc = subprocess.Popen([sys.executable, "-m", "rankdebug", "launch"], env=env,
                            pass_fds=(r,), cwd="/", stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    os.close(r)
    time.sleep(0.2)
    if request is not None:
        os.write(w, request)
    os.close(w)
    out, err = proc.communicate(timeout=90)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.timeout(120)
def test_launch_on_the_pipe_runs_with_its_env_and_folder(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "RANKDEBUG_WARM"}
    env["WARM_SEEN"] = "42"
    script = "import os; print('seen', os.environ.get('WARM_SEEN'), os.getcwd())"
    req = {"argv": ["launch", "--json", "--ranks", "0", "--no-wait", "--", sys.executable,
                    "-c", script], "env": env, "cwd": str(tmp_path)}
    got = _warm(json.dumps(req).encode(), tmp_path)
    assert got.returncode == 0, got.stderr
    events = [json.loads(line) for line in got.stdout.splitlines() if line.startswith("{")]
    assert events[0]["event"] == "job" and events[-1] == {"event": "exited", "code": 0}
    assert f"seen 42 {tmp_path.resolve()}" in got.stderr


@pytest.mark.timeout(60)
def test_eof_with_nothing_lets_it_go(tmp_path: Path) -> None:
    got = _warm(None, tmp_path)
    assert (got.returncode, got.stdout, got.stderr) == (0, "", "")


@pytest.mark.parametrize("request_text", [
    b"{not json", b'{"argv": ["plan"], "env": {}, "cwd": "/"}',
    b'{"argv": ["launch"], "env": {"A": 1}, "cwd": "/"}', b'["launch"]'])
@pytest.mark.timeout(60)
def test_bad_request_is_one_line(tmp_path: Path, request_text: bytes) -> None:
    got = _warm(request_text, tmp_path)
    assert got.returncode == 2
    assert got.stderr.startswith("rankdebug launch: RANKDEBUG_WARM: a bad request")
    assert len(got.stderr.strip().splitlines()) == 1 and "Traceback" not in got.stderr


@pytest.mark.timeout(60)
def test_a_folder_that_is_gone_is_one_line(tmp_path: Path) -> None:
    req = {"argv": ["launch", "--", "true"], "env": dict(os.environ),
           "cwd": str(tmp_path / "gone")}
    got = _warm(json.dumps(req).encode(), tmp_path)
    assert got.returncode == 2
    assert got.stderr.strip() == f"rankdebug launch: cannot run in {tmp_path / 'gone'}: " \
        "No such file or directory"

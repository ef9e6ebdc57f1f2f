"""Nothing sent to a job's control channels stops it: ``ctl.sock`` and ``--control``'s stdin
get seeded malformed lines (random bytes, JSON that is not an object, deep nesting, every
command with fields of the wrong types, bad rank reports) while a real two-rank torchrun job
trains. Each line gets exactly one error answer, the job keeps training, its stderr has no
traceback, and it still stops cleanly when asked."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest
from launch_helpers import SCRIPTS, Launch, tool, wait_for

from fuzz_lines import GROUP, lines, well_formed

STEPS = str(SCRIPTS / "steps_job.py")
SEED = 31
COUNT = 300


def _steps(tmp: Path, rank: int) -> int:
    try:
        return int((tmp / f"steps-{rank}").read_text() or 0)
    except (FileNotFoundError, ValueError):
        return 0


def _training(tmp: Path, after: dict[int, int]) -> dict[int, int]:
    """Both ranks' step counts once each has moved past ``after``."""
    return wait_for("both ranks to train on", lambda: (
        {r: _steps(tmp, r) for r in (0, 1)}
        if all(_steps(tmp, r) > after.get(r, 0) + 3 for r in (0, 1)) else None), 60)


def _job(tmp: Path) -> Launch:
    return Launch(["--ranks", "0", "--no-wait", "--control", "--", tool("torchrun"),
                   "--nproc_per_node",
                   "2", STEPS], tmp, stdin=subprocess.PIPE)


def _end(launch: Launch, tmp: Path) -> None:
    (tmp / "stop").write_text("")
    assert launch.exited(120) == 0
    text = launch.stderr_path.read_text(errors="replace")
    assert "Traceback" not in text and "internal error" not in text, text


@pytest.mark.timeout(300)
def test_ctl_sock_answers_every_malformed_line_and_the_job_trains_on(tmp_path: Path) -> None:
    launch = _job(tmp_path)
    try:
        job_dir = launch.event("job")["dir"]
        before = _training(tmp_path, {})
        sent = [m for m in lines(SEED, COUNT) if not well_formed(m, GROUP)]
        answers: list[dict[str, object]] = []
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(60)
            sock.connect(os.path.join(job_dir, "ctl.sock"))
            with sock.makefile("rb") as f:
                for message in sent:  # one at a time: each answer is this line's
                    sock.sendall(message + b"\n")
                    answers.append(json.loads(f.readline()))
        assert len(answers) == len(sent)
        for message, answer in zip(sent, answers, strict=True):
            error = answer.get("error")
            assert isinstance(error, dict) and isinstance(error.get("message"), str), (
                message[:200], answer)
            assert "internal error" not in error["message"], (message[:200], answer)
        after = _training(tmp_path, before)
        print(f"ctl.sock: {len(sent)} malformed lines (seed {SEED}), {len(answers)} error "
              f"answers; steps {before} -> {after}: the job kept training")
        assert launch.proc.poll() is None
        _end(launch, tmp_path)
    finally:
        launch.close()


@pytest.mark.timeout(300)
def test_control_stdin_answers_every_malformed_line_and_the_job_trains_on(
        tmp_path: Path) -> None:
    launch = _job(tmp_path)
    try:
        launch.event("job")
        before = _training(tmp_path, {})
        sent = [m for m in lines(SEED + 1, COUNT, events=False) if not well_formed(m, GROUP)]
        assert launch.proc.stdin is not None
        for message in sent:
            launch.proc.stdin.write(message + b"\n")
        launch.proc.stdin.flush()
        errors = [launch.event("error", 60) for _ in sent]
        assert all(isinstance(e.get("message"), str) and "internal error" not in e["message"]
                   for e in errors), errors
        time.sleep(1.0)  # no answer beyond one a line
        extra = [e for e in launch.events if e.get("event") == "error" and not e.get("_seen")]
        assert not extra, extra
        after = _training(tmp_path, before)
        print(f"--control: {len(sent)} malformed lines (seed {SEED + 1}), {len(errors)} "
              f"error events; steps {before} -> {after}: the job kept training")
        _end(launch, tmp_path)
    finally:
        launch.close()


@pytest.mark.timeout(180)
def test_attach_of_a_rank_the_job_does_not_have_is_an_error(tmp_path: Path) -> None:
    launch = _job(tmp_path)
    try:
        job_dir = launch.event("job")["dir"]
        _training(tmp_path, {})
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(30)
            sock.connect(os.path.join(job_dir, "ctl.sock"))
            with sock.makefile("rb") as f:
                sock.sendall(b'{"command": "attach", "rank": 99}\n{"command": "ping"}\n')
                missing = json.loads(f.readline())
                pong = json.loads(f.readline())
        assert "no rank 99" in missing["error"]["message"], missing
        assert pong == {"ok": True}
        _end(launch, tmp_path)
    finally:
        launch.close()

"""The hang watch (``rankdebug launch --hang-seconds S``): real torchrun jobs on gloo.

A rank that skips a collective is said to hang within S + 5 s, naming it, once; a healthy
slow job and a rank paused at a breakpoint are never said to hang; a stall that ends is
said to hang, then ``hang_over``. Times are measured from the markers the ranks write."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from launch_helpers import SCRIPTS, Launch, line_of, tool, wait_for

from rankdebug.debugplan.launch_argv import option_flags
from rankdebug.debugplan.options import LaunchOptions
from rankdebug.lsp.settings import Settings, apply
from rankdebug.runtime import registry

pytestmark = pytest.mark.timeout(240)

HANG_JOB = str(SCRIPTS.parent.parent / "jobs" / "scripts" / "hang_job.py")
WATCH_JOB = str(SCRIPTS / "hang_watch_job.py")
S = 5  # --hang-seconds in these tests
MARGIN = 5.0  # the event comes within S + MARGIN of the hang (the contract)
SLACK = 4.0  # a loaded 2-core machine: markers and reads land late


def _torchrun(n: int, script: str) -> list[str]:
    return [tool("torchrun"), "--nproc_per_node", str(n), script]


def _hangs(launch: Launch) -> list[dict[str, Any]]:
    return [e for e in launch.events if e.get("event") in ("hang", "hang_over")]


def _drain(launch: Launch, seconds: float) -> None:
    """Read events for ``seconds`` (none expected to end the job)."""
    try:
        launch.event("never", timeout=seconds)
    except AssertionError as exc:
        assert "no 'never' event" in str(exc), str(exc)


def _job_hang(job: str | None) -> Any:
    assert job is not None
    entry = registry.read_job(job)
    assert entry is not None
    return entry.get("hang", "missing")


def _mtime(path: Path) -> float:
    return path.stat().st_mtime


@pytest.mark.parametrize("armed", [True, False], ids=["armed", "unarmed-py-spy"])
def test_a_skipped_collective_is_said_once_naming_the_rank(tmp_path: Path,
                                                           armed: bool) -> None:
    # Unarmed: only rank 0 (chosen, not waiting for a client) has a handler; the culprit,
    # rank 2, is read by py-spy.
    who = ["--arm"] if armed else ["--ranks", "0", "--no-wait"]
    launch = Launch([*who, "--hang-seconds", str(S), "--", *_torchrun(3, HANG_JOB)],
                    tmp_path, env={"SCENARIO": "skip"})
    try:
        launch.event("job")
        ats = [tmp_path / f"at-{r}" for r in range(3)]
        wait_for("every rank at its last call", lambda: all(p.exists() for p in ats))
        hung_at = max(map(_mtime, ats))
        hang = launch.event("hang", timeout=S + MARGIN + SLACK + 30)
        took = time.time() - hung_at
        assert took <= S + MARGIN + SLACK, (took, hang)
        assert hang["job"] == launch.job
        assert hang["seconds"] >= S
        named = [c for c in hang["culprits"] if c["ranks"] == [2]]
        assert named, hang
        # Rank 2 alone is named, also where rank 1 is read by py-spy without numbers beside
        # rank 0's numbered all_reduce (it was said to be in a different collective).
        assert [c["ranks"] for c in hang["culprits"]] == [[2]], hang
        assert "rank 2" in hang["why"]
        for culprit in named:
            assert culprit["where"]["file"].endswith("hang_job.py")
            assert culprit["where"]["line"] == line_of(HANG_JOB, "# BARRIER")
        assert _job_hang(launch.job) == {k: hang[k] for k in ("seconds", "why", "culprits")}
        _drain(launch, 2.5 * S)  # the same hang is not said again
        assert [e["event"] for e in _hangs(launch)] == ["hang"]
        launch.signal()
        launch.exited()
    finally:
        launch.close()


def test_hang_seconds_0_watches_nothing(tmp_path: Path) -> None:
    launch = Launch(["--arm", "--hang-seconds", "0", "--", *_torchrun(2, HANG_JOB)],
                    tmp_path, env={"SCENARIO": "skip"})
    try:
        launch.event("job")
        ats = [tmp_path / f"at-{r}" for r in range(2)]
        wait_for("every rank at its last call", lambda: all(p.exists() for p in ats))
        _drain(launch, S + MARGIN + SLACK)  # hung all along: with S = 5 it would be said
        assert _hangs(launch) == []
        assert _job_hang(launch.job) is None
        launch.signal()
        launch.exited()
    finally:
        launch.close()


def test_a_healthy_slow_job_is_never_said_to_hang(tmp_path: Path) -> None:
    # Rank 2 spends 2 s more in every step: the others wait 2 s in each all_reduce, which
    # is progress, slow (S is 5).
    launch = Launch(["--arm", "--hang-seconds", str(S), "--", *_torchrun(3, WATCH_JOB)],
                    tmp_path, env={"SCENARIO": "slow", "SLOW_S": "2.0"})
    try:
        launch.event("job")
        step = tmp_path / "step-0"
        wait_for("a first step", step.exists)
        first = int(step.read_text())
        _drain(launch, 4 * S)
        assert int(step.read_text()) >= first + 5  # it went on all along
        assert _hangs(launch) == []
        assert _job_hang(launch.job) is None
        (tmp_path / "stop").touch()
        assert launch.exited() == 0
        assert _hangs(launch) == []
    finally:
        launch.close()


def test_a_rank_paused_at_a_breakpoint_is_no_hang(tmp_path: Path) -> None:
    line = line_of("hang_watch_job.py", "# BREAK")
    launch = Launch(["--ranks", "0", "--hang-seconds", str(S), "--",
                     *_torchrun(3, WATCH_JOB)], tmp_path)
    try:
        client = launch.clients(1)[0]
        client.attach({WATCH_JOB: [line]})
        stopped = client.stopped()
        assert client.top_frame(stopped["threadId"])["line"] == line
        # Ranks 1 and 2 wait in their all_reduce for rank 0, which the user holds: for
        # three times S, no word of a hang.
        _drain(launch, 3 * S)
        assert _hangs(launch) == []
        steps = int((tmp_path / "step-1").read_text()) if (tmp_path / "step-1").exists() \
            else 0
        client.request("setBreakpoints", {"source": {"path": WATCH_JOB}, "breakpoints": []})
        client.cont(stopped["threadId"])
        wait_for("the job going on", lambda: (tmp_path / "step-1").exists()
                 and int((tmp_path / "step-1").read_text()) > steps + 3)
        (tmp_path / "stop").touch()
        assert launch.exited() == 0
        assert _hangs(launch) == []
    finally:
        launch.close()


def test_a_rank_held_at_its_exception_is_no_hang(tmp_path: Path) -> None:
    # Rank 2 raises and is held alive for inspection; the others wait in their all_reduce
    # for it. The raised event has said what happened: the user holds the job, no hang.
    launch = Launch(["--arm", "--hang-seconds", str(S), "--", *_torchrun(3, HANG_JOB)],
                    tmp_path, env={"SCENARIO": "raise"})
    try:
        raised = launch.event("raised", timeout=90)
        assert raised["rank"] == 2
        _drain(launch, 3 * S)
        assert _hangs(launch) == []
        assert _job_hang(launch.job) is None
        launch.signal()
        launch.exited()
    finally:
        launch.close()


def test_a_stall_that_ends_is_said_then_said_over(tmp_path: Path) -> None:
    launch = Launch(["--arm", "--hang-seconds", str(S), "--", *_torchrun(3, WATCH_JOB)],
                    tmp_path, env={"SCENARIO": "stall"})
    try:
        launch.event("job")
        stalled = tmp_path / "stalled"
        wait_for("rank 2 stalled", stalled.exists)
        hang = launch.event("hang", timeout=S + MARGIN + SLACK + 30)
        assert time.time() - _mtime(stalled) <= S + MARGIN + SLACK
        assert [c["ranks"] for c in hang["culprits"]] == [[2]], hang
        where = hang["culprits"][0]["where"]
        stall = line_of("hang_watch_job.py", "# STALL")  # its loop: the while or the sleep
        assert where["function"] == "wait_for_go" and where["line"] in (stall, stall + 1)
        steps = int((tmp_path / "step-0").read_text())
        (tmp_path / "go").touch()
        went = time.time()
        over = launch.event("hang_over", timeout=30)
        assert time.time() - went <= 3 + SLACK  # read every S/10 s (at least every 0.5 s)
        assert over["job"] == launch.job
        assert over["seconds"] >= hang["seconds"]
        assert _job_hang(launch.job) is None
        wait_for("steps after the stall", lambda: int((tmp_path / "step-0").read_text())
                 > steps + 3)
        (tmp_path / "stop").touch()
        assert launch.exited() == 0
        assert [e["event"] for e in _hangs(launch)] == ["hang", "hang_over"]
    finally:
        launch.close()


@pytest.mark.parametrize("value", ["abc", "-1", "nan", "inf", "0.5", ""])
def test_a_bad_hang_seconds_is_one_line_and_status_2(tmp_path: Path, value: str) -> None:
    done = subprocess.run([sys.executable, "-m", "rankdebug", "launch", "--hang-seconds",
                           value, "--", sys.executable, "-c", "pass"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=60,
                          check=False)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "--hang-seconds" in lines[0], done.stderr
    assert "Traceback" not in done.stderr


def test_the_editor_setting_reaches_the_launch_argv() -> None:
    problems: list[str] = []
    settings = apply(Settings(), {"hangSeconds": 30}, problems)
    assert problems == []
    assert settings.hang_seconds == 30.0
    argv = option_flags("0", settings.launch_options())
    assert argv[argv.index("--hang-seconds") + 1] == "30"
    assert "--hang-seconds" not in option_flags("0", Settings().launch_options())
    assert option_flags("", LaunchOptions(hang_seconds=0))[-2:] == ["--hang-seconds", "0"]
    for bad in (-1, "60", True, 0.5, float("nan")):
        problems = []
        assert apply(Settings(), {"hangSeconds": bad}, problems).hang_seconds == 120.0
        assert len(problems) == 1 and "hangSeconds" in problems[0]

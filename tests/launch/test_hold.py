"""Ranks held at an uncaught exception (``rankdebug.runtime.hold``), for real: torchrun, gloo
on the CPU, real debugpy, our DAP client.

An armed job whose rank 1 raises: the rank is listed as raised (registry, ``rankdebug
jobs``), says so on its stderr, and stays alive with the other ranks waiting at a barrier
well past the process group's own 3 s timeout; ``eval`` reads the raising frame and
``stacks`` shows where it raised; ``attach`` stops it there with its locals, and after
Continue the job ends with a failure status and leaves nothing behind. An unchosen rank of a
debugged (not armed) job is held too, and the job's stop ends it at once; a thread is held
and let go the same way; ``RANKDEBUG_HOLD=0`` lets the rank die as before.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from launch_helpers import SCRIPTS, Launch, job_processes, line_of, tool, wait_for

import wire_check
from dap_client import DAPClient
from rankdebug.runtime import registry

pytestmark = pytest.mark.timeout(240)

SCRIPT = "hold_job.py"
RAISES = line_of(SCRIPT, "# RAISES")
USER_TIMEOUT_S = 3.0  # the script's init_process_group(timeout=...)


def rankdebug(*args: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "rankdebug", *args], capture_output=True,
                          text=True, timeout=timeout, check=False, cwd=SCRIPTS)
    return wire_check.checked(args, done)  # --json lines as declared


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2:][:1] not in (b"Z", b"X")


def start(tmp: Path, args: list[str], nproc: int, env: dict[str, str] | None = None) -> Launch:
    return Launch([*args, "--", tool("torchrun"), "--standalone", "--nproc_per_node",
                   str(nproc), SCRIPT], tmp, env=env)


def pids(tmp: Path, nproc: int) -> dict[int, int]:
    def ready() -> dict[int, int] | None:
        found = {r: int(p.read_text()) for r in range(nproc)
                 if (p := tmp / f"ready-{r}").exists() and p.read_text()}
        return found if len(found) == nproc else None

    got: dict[int, int] = wait_for("every rank ready", ready, 120)
    return got


def raised_entry(job: str, rank: int) -> dict[str, Any]:
    """The rank as ``rankdebug jobs --json`` lists it, once it is listed as raised."""
    def listed() -> dict[str, Any] | None:
        out = rankdebug("jobs", job, "--json", "--no-gpu")
        if out.returncode != 0:
            return None
        for r in json.loads(out.stdout)["jobs"][0]["ranks"]:
            if r["rank"] == rank and r["state"] == "raised":
                return dict(r)
        return None

    got: dict[str, Any] = wait_for(f"rank {rank} listed as raised", listed, 90)
    return got


def expected_raised() -> dict[str, Any]:
    return {"exception": "ZeroDivisionError", "message": "division by zero",
            "file": str(SCRIPTS / SCRIPT), "line": RAISES, "function": "load_batch"}


def _listed_as_raised(launch: Launch, job: str, pid: int) -> None:
    """Registry, ``jobs --json``, the table and the rank's stderr line."""
    entry = raised_entry(job, 1)
    assert entry["raised"] == expected_raised()
    assert entry["pid"] == pid and entry["armed"] is True
    stored = registry.read_rank(job, 1)
    assert stored is not None and stored["state"] == "raised"
    assert stored["raised"] == expected_raised()
    others = json.loads(rankdebug("jobs", job, "--json", "--no-gpu").stdout)["jobs"][0]
    assert [r["state"] for r in others["ranks"] if r["rank"] != 1] == ["running"] * 2
    table = rankdebug("jobs", job, "--no-gpu").stdout
    assert f"raised ZeroDivisionError at {SCRIPT}:{RAISES}" in table, table
    ev = launch.event("raised", 30)  # the supervisor's --json event
    assert (ev["rank"], ev["pid"], ev["exception"], ev["line"]) == (
        1, pid, "ZeroDivisionError", RAISES), ev
    line = (f"rankdebug: rank 1 raised ZeroDivisionError at {SCRIPT}:{RAISES}; held for "
            f"inspection: rankdebug attach {job} 1 (or stop the job)")
    wait_for("the hold's line on stderr", lambda: line in launch.stderr(), 30)


def _inspected(job: str, nproc: int) -> None:
    """eval reads the raising frame (the waiting ranks answer as usual); stacks show the
    held rank where it raised, the others at the barrier."""
    got = json.loads(rankdebug("eval", job, "1", "(scale, values)", "--json").stdout
                     .splitlines()[0])
    assert (got["event"], got["text"]) == ("result", "(0, [1, 7])")
    assert rankdebug("eval", job, "0", "lr").stdout.strip() == "0.001"
    report = json.loads(rankdebug("stacks", job, "--json").stdout)
    assert [r["via"] for r in report["ranks"]] == ["handler"] * nproc
    assert report["odd"] == [1]
    held = next(g for g in report["groups"] if g["main"] and g["ranks"] == [1])
    assert held["raised"] == "ZeroDivisionError"
    assert (held["frames"][0]["name"], held["frames"][0]["line"]) == ("load_batch", RAISES)
    waiting = next(g for g in report["groups"] if g["main"] and g["ranks"] == [0, 2])
    assert waiting["collective"] == "barrier"


def _attach_and_continue(launch: Launch, job: str) -> None:
    """``rankdebug attach`` stops the held rank at its exception; Continue ends the job."""
    t0 = time.monotonic()
    reply = json.loads(rankdebug("attach", job, "1", "--json").stdout)
    assert reply["event"] == "listening" and reply["rank"] == 1
    client = DAPClient(reply["host"], int(reply["port"]))
    try:
        client.attach({}, exceptions=["uncaught"])  # VS Code's default filter
        stopped = client.stopped(timeout=60)
        seconds = time.monotonic() - t0
        assert stopped["reason"] == "exception"
        thread = int(stopped["threadId"])
        frames = client.request("stackTrace", {"threadId": thread})["stackFrames"]
        assert (frames[0]["name"], frames[0]["line"]) == ("load_batch", RAISES)
        assert frames[0]["source"]["path"] == str(SCRIPTS / SCRIPT)
        assert not [f for f in frames if "rankdebug" in f["source"].get("path", "")]
        assert client.evaluate("scale", frames[0]["id"]) == "0"
        assert client.evaluate("values", frames[0]["id"]) == "[1, 7]"
        info = client.request("exceptionInfo", {"threadId": thread})
        assert "ZeroDivisionError" in info["exceptionId"]
        print(f"attach to a held rank -> stopped at its exception: {seconds:.2f} s")
        assert launch.proc.poll() is None
        client.cont(thread)
        t_cont = time.monotonic()
        code = launch.exited(120)
        print(f"continue -> the job ended ({code}) in {time.monotonic() - t_cont:.2f} s")
        assert code != 0
    finally:
        client.close()


def test_an_armed_rank_is_held_inspected_and_attached_at_its_exception(tmp_path: Path) -> None:
    nproc = 3
    launch = start(tmp_path, ["--arm"], nproc)
    try:
        job = str(launch.event("job")["job"])
        ranks = pids(tmp_path, nproc)
        _listed_as_raised(launch, job, ranks[1])
        t_listed = time.monotonic()
        _inspected(job, nproc)

        # Past the process group's own timeout: nobody timed out, nobody ended.
        time.sleep(max(0.0, t_listed + 2 * USER_TIMEOUT_S + 1 - time.monotonic()))
        assert launch.proc.poll() is None, launch.stderr()
        assert all(alive(pid) for pid in ranks.values())
        now = json.loads(rankdebug("jobs", job, "--json", "--no-gpu").stdout)["jobs"][0]
        assert [r["state"] for r in now["ranks"]] == ["running", "raised", "running"]
        assert "timed out" not in launch.stderr().lower()

        _attach_and_continue(launch, job)
        assert not job_processes(job)
        assert not Path(registry.job_dir(job)).exists()
        # The rank's usual end: the traceback (torch's prefix), from the user's script.
        err = launch.stderr()
        assert "[rank1]: ZeroDivisionError: division by zero" in err, err
        assert "hold.py" not in err
        # Its end broke the others' barrier: their errors were not held (the job ended).
        assert "rank 0 raised" not in err and "rank 2 raised" not in err
    finally:
        launch.close()


def test_an_unchosen_rank_of_a_debugged_job_is_held_and_the_stop_ends_it(
        tmp_path: Path) -> None:
    nproc = 2
    launch = start(tmp_path, ["--ranks", "0", "--no-wait"], nproc)
    try:
        job = str(launch.event("job")["job"])
        ranks = pids(tmp_path, nproc)
        entry = raised_entry(job, 1)
        assert entry["raised"] == expected_raised()
        assert entry["armed"] is True  # its control socket was started at the exception
        got = rankdebug("eval", job, "1", "scale")
        assert got.returncode == 0 and got.stdout.strip() == "0", got.stderr
        time.sleep(2 * USER_TIMEOUT_S)
        assert launch.proc.poll() is None and all(alive(p) for p in ranks.values())
        t0 = time.monotonic()
        launch.signal(signal.SIGTERM)
        code = launch.exited(30)
        seconds = time.monotonic() - t0
        print(f"stop a job with a held rank: {seconds:.2f} s")
        assert code == 128 + signal.SIGTERM and seconds < 5
        assert not job_processes(job)
        assert all(not alive(p) for p in ranks.values())
        err = launch.stderr()
        assert "rankdebug: rank 1 stopped while held at its exception:" in err, err
        assert "ZeroDivisionError: division by zero" in err
    finally:
        launch.close()


def test_a_thread_is_held_then_continues_and_the_rank_runs_on(tmp_path: Path) -> None:
    nproc = 2
    launch = start(tmp_path, ["--arm"], nproc, env={"THREAD": "1"})
    try:
        job = str(launch.event("job")["job"])
        pids(tmp_path, nproc)
        entry = raised_entry(job, 1)
        assert entry["raised"] == expected_raised()
        wait_for("the hold's line", lambda: "in thread 'loader'; held for inspection"
                 in launch.stderr(), 30)
        got = rankdebug("eval", job, "1", "values")
        assert got.stdout.strip() == "[1, 7]", got.stderr
        reply = json.loads(rankdebug("attach", job, "1", "--json").stdout)
        client = DAPClient(reply["host"], int(reply["port"]))
        try:
            client.attach({})  # no exception filter: it stops there all the same
            stopped = client.stopped(timeout=60)
            assert stopped["reason"] == "exception"
            frame = client.top_frame(int(stopped["threadId"]))
            assert (frame["name"], frame["line"]) == ("load_batch", RAISES)
            assert client.evaluate("scale", frame["id"]) == "0"
            client.cont(int(stopped["threadId"]))
            # As under plain Python: a thread's exception does not end the rank.
            assert launch.exited(120) == 0
        finally:
            client.close()
        assert not job_processes(job)
    finally:
        launch.close()


def test_hold_can_be_turned_off(tmp_path: Path) -> None:
    launch = start(tmp_path, ["--arm"], 2, env={"RANKDEBUG_HOLD": "0"})
    try:
        job = str(launch.event("job")["job"])
        assert launch.exited(120) != 0
        assert "held for inspection" not in launch.stderr()
        assert not job_processes(job)
    finally:
        with contextlib.suppress(OSError):
            os.remove(tmp_path / "ready-0")
        launch.close()

"""Breakpoints bound to ranks on a rank that gets its debugger late: an armed rank that was
not chosen starts debugpy when asked (``rankdebug attach JOB RANK``), with no gate in front,
so the rank reads the binding itself (``runtime.pydevd_bound``). A plain DAP client sends
``ranks 2``, ``rank 1`` and ``ranks 0-2 and step > 3``, as VS Code sends every breakpoint
to every session."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from dap_client import DAPClient, DAPError

pytestmark = pytest.mark.timeout(240)

STEPS = Path(__file__).resolve().parents[1] / "repl" / "scripts" / "steps.py"


def _line(tag: str) -> int:
    lines = STEPS.read_text().splitlines()
    return next(n for n, text in enumerate(lines, 1) if text.rstrip().endswith(f"# {tag}"))


@pytest.fixture
def job(tmp_path: Path) -> Iterator[str]:
    launcher = tmp_path / "steps-launcher"
    launcher.write_text(f"#!/bin/sh\nexec {sys.executable} {STEPS} launch \"$@\"\n")
    launcher.chmod(0o700)
    proc = subprocess.Popen(
        [sys.executable, "-m", "rankdebug", "launch", "--json", "--arm", "--ranks", "0", "--",
         str(launcher), "4"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL, text=True, cwd=STEPS.parent,
        env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert proc.stdout is not None
    try:
        job_id = ""
        for line in proc.stdout:
            event = json.loads(line)
            job_id = event.get("job", job_id)
            if event.get("event") == "listening":
                break
        assert job_id
        yield job_id
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)


def _client(job: str, rank: int) -> DAPClient:
    done = subprocess.run([sys.executable, "-m", "rankdebug", "attach", job, str(rank), "--json"],
                          capture_output=True, text=True, timeout=120, check=True)
    event = json.loads(done.stdout.strip().splitlines()[-1])
    assert event["event"] == "listening", done.stdout
    return DAPClient(event["host"], event["port"])


def _set(client: DAPClient, condition: str) -> dict[str, object]:
    """initialize, attach, one breakpoint with ``condition``, configurationDone: its answer."""
    client.request("initialize", {"clientID": "t", "adapterID": "debugpy", "pathFormat": "path",
                                  "linesStartAt1": True, "columnsStartAt1": True})
    attach = client.send("attach", {"justMyCode": True})
    client.wait_event("initialized", 60)
    body = client.request("setBreakpoints", {"source": {"path": str(STEPS)}, "breakpoints": [
        {"line": _line("BREAK"), "condition": condition}]})
    client.request("configurationDone", {}, 60)
    client.response(attach, 60)
    (answer,) = body["breakpoints"]
    assert isinstance(answer, dict)
    return answer


def test_a_late_rank_reads_the_breakpoints_bound_to_it(job: str) -> None:
    two = _client(job, 2)
    try:
        assert _set(two, "ranks 2")["verified"] is True
        stop = two.stopped(60)
        frame = two.top_frame(stop["threadId"])
        assert (frame["line"], two.evaluate("rank", frame["id"])) == (_line("BREAK"), "2")
    finally:
        two.disconnect()
    three = _client(job, 3)
    try:
        answer = _set(three, "rank 1")
        assert answer == {"verified": False, "message": "bound to ranks 1: rank 3 ignores it"}
        with pytest.raises(DAPError, match="no 'stopped' event"):
            three.stopped(3)  # never: the breakpoint is not planted in rank 3
    finally:
        three.disconnect()
    one = _client(job, 1)
    try:
        assert _set(one, "ranks 0-2 and step > 3")["verified"] is True
        stop = one.stopped(60)
        frame = one.top_frame(stop["threadId"])
        assert int(one.evaluate("step", frame["id"])) > 3
    finally:
        one.disconnect()

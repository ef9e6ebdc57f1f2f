"""Armed jobs for real (``rankdebug launch --arm``, torchrun, gloo on the CPU, real debugpy).

One 3-rank job, one story: no rank runs a debugger; ``jobs`` lists every rank with its
control socket (0600); ``stacks`` reads every rank through its handler and singles out the
rank stuck elsewhere; ``eval`` reads a local of the user's code in a live rank (errors and
timeouts are clear); ``attach`` makes rank 0 listen without a restart, a DAP client stops it
at a breakpoint while rank 1 keeps stepping; the job then ends with exit status 0 and leaves
no process, socket or registry folder behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from launch_helpers import SCRIPTS, Launch, job_processes, line_of, tool, wait_for

import wire_check
from dap_client import DAPClient
from rankdebug.runtime import registry

pytestmark = pytest.mark.timeout(240)

SCRIPT = "armed_job.py"
NPROC = 3


def rankdebug(*args: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "rankdebug", *args], capture_output=True,
                          text=True, timeout=timeout, check=False, cwd=SCRIPTS)
    return wire_check.checked(args, done)  # --json lines as declared


def as_json(out: subprocess.CompletedProcess[str]) -> Any:
    assert out.stdout.strip(), out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


class Armed:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.launch = Launch(["--arm", "--control", "--", tool("torchrun"), "--standalone",
                              "--nproc_per_node", str(NPROC), SCRIPT], tmp,
                             stdin=subprocess.PIPE)
        self.job_event = self.launch.event("job")
        self.job = str(self.job_event["job"])

    def ready(self) -> dict[int, int]:
        def pids() -> dict[int, int] | None:
            found = {r: int(p.read_text()) for r in range(NPROC)
                     if (p := self.tmp / f"ready-{r}").exists() and p.read_text()}
            return found if len(found) == NPROC else None

        got: dict[int, int] = wait_for("every rank ready", pids, 120)
        return got

    def steps(self, rank: int) -> int:
        try:
            return int((self.tmp / f"steps-{rank}").read_text() or 0)
        except (OSError, ValueError):
            return 0


@pytest.fixture(scope="module")
def armed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Armed]:
    job = Armed(tmp_path_factory.mktemp("armed"))
    try:
        job.ready()
        yield job
    finally:
        (job.tmp / "release").touch()
        (job.tmp / "stop").touch()
        with contextlib.suppress(AssertionError):
            job.launch.wait(30)
        job.launch.close()


def _job(armed: Armed) -> dict[str, Any]:
    def listed() -> dict[str, Any] | None:
        found = as_json(rankdebug("jobs", "--json"))
        for j in found["jobs"]:
            if j["id"] == armed.job and len([r for r in j["ranks"] if r["armed"]]) == NPROC:
                return dict(j)
        return None

    got: dict[str, Any] = wait_for("every rank armed in `rankdebug jobs`", listed, 60)
    return got


def test_armed_job_runs_no_debugger_and_lists_its_sockets(armed: Armed) -> None:
    assert armed.job_event["armed"] is True
    assert armed.job_event["ranks"] == []  # --arm alone: no rank debugged from the start
    job = _job(armed)
    assert job["armed"] is True and job["source"] == "registry"
    folder = Path(registry.job_dir(armed.job))
    for r in job["ranks"]:
        path = Path(r["socket"])
        assert path.parent == folder and path.name == f"rank-{r['rank']}.sock"
        info = path.stat()
        assert stat.S_ISSOCK(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600
        assert r["port"] is None
    for rank in range(NPROC):
        out = rankdebug("eval", armed.job, str(rank), "'debugpy' in __import__('sys').modules")
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "False"  # the handler imported no debugger
    assert not [e for e in armed.launch.events if e.get("event") == "listening"]


def test_stacks_through_the_handlers_single_out_the_stuck_rank(armed: Armed) -> None:
    out = rankdebug("stacks", armed.job, "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads(out.stdout)
    assert [r["via"] for r in report["ranks"]] == ["handler"] * NPROC
    assert report["odd"] == [NPROC - 1]
    main = [g for g in report["groups"] if g["main"]]
    assert main[0]["ranks"] == list(range(NPROC - 1))
    assert main[0]["collective"] == "all_reduce"
    assert "train_step" in main[0]["summary"]
    top, *_ = main[0]["frames"]  # innermost: torch's all_reduce, library code
    assert top["library"] is True and top["short"].startswith("torch/distributed/")
    user = next(f for f in main[0]["frames"] if f["name"] == "train_step")
    assert user["library"] is False and user["short"].endswith(f"{SCRIPT}:{user['line']}")
    odd = next(g for g in main if g["odd"])
    assert odd["ranks"] == [NPROC - 1] and "stuck_in_data" in odd["summary"]
    text = rankdebug("stacks", armed.job)
    assert "odd one out" in text.stdout and f"rank {NPROC - 1}" in text.stdout


def test_eval_reads_the_users_frames_and_reports_errors(armed: Armed) -> None:
    for rank in range(NPROC):
        out = rankdebug("eval", armed.job, str(rank), "lr", "--json")
        got = json.loads(out.stdout.splitlines()[0])
        assert got["event"] == "result" and got["rank"] == rank
        assert float(got["text"]) == pytest.approx(0.001 * (rank + 1))
        assert got["type"] == "float"
        # One rank: read where it is (no point to agree on).
        assert as_json(out) == {"event": "compare", "groups": [{"ranks": [rank],
                                                                "text": got["text"]}],
                                "at": None}
    tensor = rankdebug("eval", armed.job, "0", "t * 2")
    assert tensor.returncode == 0 and tensor.stdout.strip().startswith("tensor([")
    bad = rankdebug("eval", armed.job, "1", "1/0", "--json")
    assert bad.returncode == 1
    error = json.loads(bad.stdout.splitlines()[0])
    assert (error["event"], error["rank"]) == ("error", 1)
    assert error["message"] == "ZeroDivisionError: division by zero"
    stmt = rankdebug("eval", armed.job, "1", "x = 1\nx + 1")
    assert stmt.returncode == 0 and stmt.stdout.strip() == "2"
    t0 = time.monotonic()
    slow = rankdebug("eval", armed.job, "1", "__import__('time').sleep(30)", "--timeout", "1")
    assert slow.returncode == 1 and "no result after 1 s" in slow.stderr
    assert time.monotonic() - t0 < 15
    missing = rankdebug("eval", armed.job, "7", "lr")
    assert missing.returncode == 2 and "no rank 7" in missing.stderr


def test_attach_an_armed_rank_while_the_others_run(armed: Armed) -> None:
    (armed.tmp / "release").touch()
    wait_for("rank 1 stepping", lambda: armed.steps(1) > 3)
    t0 = time.monotonic()
    got = as_json(rankdebug("attach", armed.job, "0", "--json"))
    assert got["event"] == "listening" and got["rank"] == 0 and got["host"] == "127.0.0.1"
    ev = armed.launch.event("listening", 30)  # the supervisor reports it too
    assert (ev["rank"], ev["port"]) == (0, got["port"])
    client = DAPClient(got["host"], int(got["port"]))
    try:
        client.attach({str(SCRIPTS / SCRIPT): [line_of(SCRIPT)]})
        stopped = client.stopped(timeout=60)
        seconds = time.monotonic() - t0
        frame = client.top_frame(int(stopped["threadId"]))
        assert stopped["reason"] == "breakpoint" and frame["line"] == line_of(SCRIPT)
        assert client.evaluate("rank", frame["id"]) == "0"
        before = armed.steps(1)
        wait_for("rank 1 stepping while rank 0 is paused", lambda: armed.steps(1) > before + 5)
        paused_at = armed.steps(0)
        time.sleep(0.5)
        assert armed.steps(0) == paused_at
        print(f"attach to an armed rank -> paused at the breakpoint: {seconds:.2f} s")
        client.request("setBreakpoints", {"source": {"path": str(SCRIPTS / SCRIPT)},
                                          "breakpoints": []})
        client.cont(int(stopped["threadId"]))
        wait_for("rank 0 stepping again", lambda: armed.steps(0) > paused_at + 3)
    finally:
        client.disconnect()
    # --control: the supervisor tells another armed rank to attach.
    armed.launch.command({"command": "attach", "rank": 1})
    ev = armed.launch.event("listening", 60)
    assert ev["rank"] == 1 and isinstance(ev["port"], int)


def test_the_armed_job_ends_cleanly(armed: Armed) -> None:
    folder = Path(registry.job_dir(armed.job))
    sockets = list(folder.glob("rank-*.sock"))
    assert len(sockets) == NPROC
    (armed.tmp / "release").touch()
    (armed.tmp / "stop").touch()
    assert armed.launch.exited(120) == 0, armed.launch.stderr()
    assert not job_processes(armed.job)
    assert not folder.exists()


def test_a_peer_of_another_user_gets_no_answer() -> None:
    """The socket file is 0600 in a 0700 folder; even when those are opened up, the handler
    answers only its own user (SO_PEERCRED)."""
    if os.getuid() != 0:
        print("skipped: needs root to act as another user")
        pytest.skip("needs root to act as another user")
    import shutil
    import tempfile

    from rankdebug.runtime import handler

    folder = tempfile.mkdtemp(prefix="rankdebug-peer-", dir="/tmp")  # pytest's are 0700
    os.chmod(folder, 0o777)
    path = handler.start(folder, 5)
    assert path is not None
    try:
        os.chmod(path, 0o666)
        pid = os.fork()
        if pid == 0:  # the other user
            code = 1
            try:
                os.setgid(65534)
                os.setuid(65534)
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.settimeout(5)
                s.connect(path)  # allowed by the file's mode: the handler must say no
                try:
                    s.sendall(b'{"command": "eval", "expr": "1"}\n')
                    code = 0 if s.recv(100) == b"" else 3  # closed without an answer
                except (BrokenPipeError, ConnectionResetError):
                    code = 0  # closed before or after our request
            except BaseException as exc:
                os.write(2, f"peer: {exc!r}\n".encode())
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0  # connected, and was turned away
    finally:
        handler.stop()
        shutil.rmtree(folder, ignore_errors=True)

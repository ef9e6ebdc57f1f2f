"""``rankdebug launch`` on real torchrun jobs (gloo, CPU) with real debugpy and a DAP client."""

from __future__ import annotations

import contextlib
import re
import signal
import sys
import threading
import time
from pathlib import Path

import pytest
from launch_helpers import (
    SCRIPTS,
    Launch,
    job_adapters,
    job_processes,
    line_of,
    nobody_listens,
    read_json,
    tool,
)

from dap_client import DAPClient, DAPError
from rankdebug.runtime import registry

pytestmark = pytest.mark.timeout(180)

DDP = str(SCRIPTS / "ddp_steps.py")


def _stop_at_break(ev: dict[str, object], script: str, line: int) -> tuple[DAPClient, int]:
    client = DAPClient(str(ev["host"]), int(str(ev["port"])))
    client.attach({script: [line]})
    stopped = client.stopped()
    assert stopped["reason"] == "breakpoint"
    return client, int(stopped["threadId"])


def test_chosen_rank_stops_evaluates_and_job_exits_0(tmp_path: Path) -> None:
    line = line_of("ddp_steps.py")
    launch = Launch(["--ranks", "1", "--", tool("torchrun"), "--nproc_per_node", "2", DDP],
                    tmp_path)
    try:
        ev = launch.event("listening")
        assert ev["rank"] == 1 and ev["host"] == "127.0.0.1" and ev["job"] == launch.job
        client, thread = _stop_at_break(ev, DDP, line)
        frame = client.top_frame(thread)
        assert frame["line"] == line and Path(frame["source"]["path"]).name == "ddp_steps.py"
        assert client.evaluate('int(os.environ["RANK"])', frame["id"]) == "1"
        client.request("setBreakpoints", {"source": {"path": DDP}, "breakpoints": []})
        client.cont(thread)
        assert launch.exited() == 0
        client.close()
    finally:
        launch.close()
    unchosen = read_json(tmp_path / "rank-0.json")
    chosen = read_json(tmp_path / "rank-1.json")
    assert unchosen["debugpy"] is False and unchosen["pydevd"] is False
    assert unchosen["rankdebug"] == []
    assert chosen["debugpy"] is True
    assert launch.job is not None and job_processes(launch.job) == []


def test_sigterm_ends_every_process_within_5s(tmp_path: Path) -> None:
    launch = Launch(["--ranks", "0,1", "--", tool("torchrun"), "--nproc_per_node", "2", DDP],
                    tmp_path)
    try:
        first = launch.event("listening")
        second = launch.event("listening")
        ports = [int(first["port"]), int(second["port"])]
        assert launch.job is not None and job_processes(launch.job)
        deadline = time.monotonic() + 20  # each rank's adapter starts beside it
        while len(job_adapters(launch.job)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(job_adapters(launch.job)) >= 2  # (one may still be daemonizing)
        started = time.monotonic()
        launch.signal()
        code = launch.exited(timeout=10)
        assert time.monotonic() - started < 5.0
        assert code != 0
        assert job_processes(launch.job) == []
        assert job_adapters(launch.job) == []
        assert all(nobody_listens("127.0.0.1", p) for p in ports)
        from rankdebug.runtime import registry

        assert registry.read_job(launch.job) is None
        # A stop reads as one: torchrun's SignalException is one line, not a traceback.
        err = launch.stderr()
        assert "Traceback" not in err, err
        assert re.search(r"rankdebug: torchrun \(pid \d+\) stopped: .*signal: 15", err), err
    finally:
        launch.close()


def test_a_killed_supervisor_leaves_nothing_behind(tmp_path: Path) -> None:
    # SIGKILL: no cleanup runs in the supervisor; the launcher gets SIGTERM from the kernel
    # (PR_SET_PDEATHSIG), ends its ranks, and debugpy's adapters end with their ranks.
    launch = Launch(["--ranks", "1", "--", tool("torchrun"), "--nproc_per_node", "2", DDP],
                    tmp_path)
    try:
        launch.event("listening")
        assert launch.job is not None
        launch.signal(signal.SIGKILL)
        deadline = time.monotonic() + 20
        while job_processes(launch.job) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert job_processes(launch.job) == []
        # Its janitor removes the registry folder; were the janitor killed too, the next
        # launch would prune it (a folder whose supervisor is gone).
        launch.proc.wait(10)
        folder = Path(registry.job_dir(launch.job))
        deadline = time.monotonic() + 5
        while folder.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not folder.exists()
        registry.create_job(launch.job, {"pid": launch.proc.pid})
        assert launch.job in registry.prune() and not folder.exists()
    finally:
        launch.close()


def test_dap_terminate_ends_the_job(tmp_path: Path) -> None:
    line = line_of("ddp_steps.py")
    launch = Launch(["--ranks", "1", "--break", f"{DDP}:{line}", "--", tool("torchrun"),
                     "--nproc_per_node", "2", DDP], tmp_path)
    try:
        ev = launch.event("listening")
        client, _thread = _stop_at_break(ev, DDP, line)
        started = time.monotonic()
        client.disconnect(terminate=True)
        code = launch.exited(timeout=10)
        assert time.monotonic() - started < 5.0
        assert code != 0
        assert launch.job is not None and job_processes(launch.job) == []
        assert nobody_listens(str(ev["host"]), int(ev["port"]))
    finally:
        launch.close()


def test_crash_of_an_unchosen_rank_ends_the_job(tmp_path: Path) -> None:
    crash = str(SCRIPTS / "crash.py")
    launch = Launch(["--ranks", "1", "--break", f"{crash}:{line_of('crash.py', 'sleep')}",
                     "--", tool("torchrun"), "--nproc_per_node", "2", crash], tmp_path)
    try:
        ev = launch.event("listening")
        client = DAPClient(str(ev["host"]), int(ev["port"]))

        def attach() -> None:
            with contextlib.suppress(DAPError):  # pending until a hit; the job dies first
                client.attach({})

        threading.Thread(target=attach, daemon=True).start()
        assert launch.exited(timeout=60) != 0
        # The rank that failed is named, not only the chosen rank the launcher then stopped.
        err = launch.stderr()
        assert re.search(r"rank 0 \(pid \d+\) (had )?ended first", err), err
        assert launch.job is not None and job_processes(launch.job) == []
        assert nobody_listens(str(ev["host"]), int(ev["port"]))
    finally:
        launch.close()


def test_rank_exits_when_its_client_has_detached(tmp_path: Path) -> None:
    # debugpy.listen() (--attach start), a stop, then the client detaches: the rank must
    # still exit when its script ends.
    script = str(SCRIPTS / "single.py")
    line = line_of("single.py")
    launch = Launch(["--ranks", "0", "--attach", "start", "--", sys.executable, script],
                    tmp_path)
    try:
        ev = launch.event("listening")
        client, _thread = _stop_at_break(ev, script, line)
        client.disconnect(terminate=False)  # detach: breakpoints go, the rank runs on
        assert launch.exited(timeout=60) == 0
    finally:
        launch.close()

"""``rankdebug.breakpoint``: chosen ranks stop, the others wait without timeouts, no deadlock."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from launch_helpers import BIN, SCRIPTS, adapter_ports, line_of, tool

from dap_client import DAPClient

pytestmark = pytest.mark.timeout(120)


def _start(tmp: Path) -> tuple[subprocess.Popen[str], tuple[str, int], list[str]]:
    env = dict(os.environ, MARKER_DIR=str(tmp), OMP_NUM_THREADS="1",
               PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    proc = subprocess.Popen([tool("torchrun"), "--nproc_per_node", "2",
                             str(SCRIPTS / "dist_break.py")],
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                            env=env, cwd=SCRIPTS)
    assert proc.stderr is not None
    seen: list[str] = []
    for line in proc.stderr:
        seen.append(line)
        m = re.search(r"rank 1 stopped at a breakpoint; attach a debugger to ([\d.]+):(\d+)",
                      line)
        if m:
            threading.Thread(target=seen.extend, args=(proc.stderr,), daemon=True).start()
            return proc, (m.group(1), int(m.group(2))), seen
    proc.wait()
    raise AssertionError("".join(seen)[-4000:])


def _detach_and_finish(proc: subprocess.Popen[str], host: str, port: int,
                       log: list[str]) -> None:
    """A client attaches to the stopped rank, sees it stopped and detaches: every rank
    goes on and the job ends with 0."""
    client = DAPClient(host, port)
    client.attach({})
    client.stopped()
    client.disconnect(terminate=False)
    assert proc.wait(60) == 0, "".join(log)[-3000:]


def test_others_wait_until_the_chosen_rank_continues(tmp_path: Path) -> None:
    proc, (host, port), log = _start(tmp_path)
    try:
        client = DAPClient(host, port)
        client.attach({})
        stopped = client.stopped()
        frame = client.top_frame(stopped["threadId"])
        assert frame["line"] == line_of("dist_break.py", "# STOP")
        assert client.evaluate("rank", frame["id"]) == "1"
        time.sleep(2.0)
        assert not (tmp_path / "after-0.txt").exists()  # rank 0 is still waiting
        released = time.time()
        client.cont(stopped["threadId"])
        assert proc.wait(60) == 0, "".join(log)[-3000:]
        client.close()
    finally:
        proc.kill()
    after0 = float((tmp_path / "after-0.txt").read_text())
    assert released - 0.5 <= after0 <= released + 3.0


def test_detaching_releases_everyone(tmp_path: Path) -> None:
    proc, (host, port), log = _start(tmp_path)
    try:
        _detach_and_finish(proc, host, port, log)
    finally:
        proc.kill()
    assert (tmp_path / "after-0.txt").exists() and (tmp_path / "after-1.txt").exists()


def test_breakpoint_is_a_cheap_import() -> None:
    code = "import sys, rankdebug; print(sorted(m for m in sys.modules if 'rankdebug' in m))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['rankdebug']"


def test_the_job_is_one_row_and_its_adapter_the_owners(tmp_path: Path) -> None:
    """A job rankdebug did not start, stopped by ``rankdebug.breakpoint``: ``rankdebug jobs``
    lists it once (the registry's ``adhoc-`` entry holds every rank found beside the one
    that registered), and the port it prints is served by the owner-only adapter."""
    import json

    proc, (host, port), log = _start(tmp_path)
    try:
        found = subprocess.run([sys.executable, "-m", "rankdebug", "jobs", "--json"],
                               capture_output=True, text=True, timeout=60, check=True)
        jobs = json.loads(found.stdout)["jobs"]
        mine = [j for j in jobs
                if any(r.get("rank") == 1 and r.get("port") == port for r in j["ranks"])]
        assert len(mine) == 1, found.stdout
        ours = [j for j in jobs
                if {r.get("pid") for r in j["ranks"]} & {r.get("pid") for r in mine[0]["ranks"]}]
        assert len(ours) == 1 and sorted(r["rank"] for r in ours[0]["ranks"]) == [0, 1], ours
        rank1 = next(r["pid"] for r in mine[0]["ranks"] if r["rank"] == 1)
        assert port in adapter_ports(rank1), "the port is not rankdebug's owner-only adapter"
        _detach_and_finish(proc, host, port, log)
    finally:
        proc.kill()


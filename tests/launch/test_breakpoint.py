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
from launch_helpers import BIN, SCRIPTS, line_of, tool

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
        client = DAPClient(host, port)
        client.attach({})
        client.stopped()
        client.disconnect(terminate=False)
        assert proc.wait(60) == 0, "".join(log)[-3000:]
    finally:
        proc.kill()
    assert (tmp_path / "after-0.txt").exists() and (tmp_path / "after-1.txt").exists()


def test_breakpoint_is_a_cheap_import() -> None:
    code = "import sys, rankdebug; print(sorted(m for m in sys.modules if 'rankdebug' in m))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['rankdebug']"

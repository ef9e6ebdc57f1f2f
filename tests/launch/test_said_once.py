"""Without --json, what a person reads on stderr is said once: a rank held at an uncaught
exception says so itself, and ``rankdebug launch`` no longer repeats it in a line of its own
(the line was printed twice, the second without the attach hint)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from launch_helpers import BIN, SCRIPTS, tool, wait_for


@pytest.mark.timeout(180)
def test_a_held_rank_is_said_once(tmp_path: Path) -> None:
    env = dict(os.environ, MARKER_DIR=str(tmp_path), OMP_NUM_THREADS="1",
               PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    err = tmp_path / "stderr"
    with open(err, "wb") as sink:
        launch = subprocess.Popen(
            [sys.executable, "-m", "rankdebug", "launch", "--ranks", "0", "--no-wait", "--",
             tool("torchrun"), "--nproc_per_node", "2", str(SCRIPTS / "hold_job.py")],
            stdout=subprocess.DEVNULL, stderr=sink, cwd=SCRIPTS, env=env)
    try:
        wait_for("rank 1 to be held", lambda: "held for inspection" in err.read_text(), 90)
        time.sleep(2.0)  # a repeat would come within milliseconds
        said = [line for line in err.read_text().splitlines()
                if "raised" in line and "held for inspection" in line]
        assert len(said) == 1, said
        assert "rankdebug attach" in said[0], said  # the rank's own line, with the hint
    finally:
        launch.terminate()
        launch.wait(60)

"""A debug session on a smoke command: `rankdebug launch` runs the smoke argv as it runs any
command, rank 1 stops at a breakpoint in the training loop, and the job ends with 0."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from smoke_helpers import EXAMPLES, cli

from dap_client import DAPClient

NANOGPT = EXAMPLES / "nanogpt"


def _events(proc: subprocess.Popen[str]) -> queue.Queue[dict[str, Any] | None]:
    out: queue.Queue[dict[str, Any] | None] = queue.Queue()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("{"):
                out.put(json.loads(line))
        out.put(None)

    threading.Thread(target=read, daemon=True).start()
    return out


@pytest.mark.timeout(150)
def test_rank_1_of_the_smoke_run_stops_at_a_breakpoint(tmp_path: Path) -> None:
    done = cli("smoke", "--json", "--cwd", str(NANOGPT), "--", "torchrun", "--standalone",
               "--nproc_per_node", "8", "train.py", "config/char.py")
    smoke = json.loads(done.stdout)
    script = NANOGPT / "train.py"
    line = next(n for n, t in enumerate(script.read_text().splitlines(), 1)
                if "loss.backward()" in t)
    stderr = (tmp_path / "launch.stderr").open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "rankdebug", "launch", "--json", "--ranks",
                             "1", "--break", f"train.py:{line}", "--", *smoke["argv"]],
                            cwd=NANOGPT, env={**os.environ, **smoke["env"],
                                              "OMP_NUM_THREADS": "1"},
                            stdout=subprocess.PIPE, stderr=stderr, text=True)
    events = _events(proc)
    try:
        while (ev := events.get(timeout=90)) is not None and ev.get("event") != "listening":
            pass
        assert ev is not None, (tmp_path / "launch.stderr").read_text()[-3000:]
        assert ev["rank"] == 1
        client = DAPClient(str(ev["host"]), int(ev["port"]))
        client.attach({str(script): [line]})
        stopped = client.stopped()
        assert stopped["reason"] == "breakpoint"
        frame = client.top_frame(stopped["threadId"])
        assert frame["line"] == line
        # The smoke run's values, as the rewrite set them.
        assert client.evaluate("max_iters", frame["id"]) == "3"
        assert client.evaluate("batch_size", frame["id"]) == "1"
        assert client.evaluate("rank", frame["id"]) == "1"
        client.request("setBreakpoints", {"source": {"path": str(script)}, "breakpoints": []})
        client.cont(stopped["threadId"])
        assert proc.wait(90) == 0, (tmp_path / "launch.stderr").read_text()[-3000:]
        client.close()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        stderr.close()

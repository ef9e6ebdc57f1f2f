"""A scripted client that steps the moment a rank stops (10 ms, before the job has read
where the rank stands): ``rankdebug launch --json`` still says every stop, each before the
``continued`` that follows it (the stop's event was lost: the rank had run on before its
place was read)."""

from __future__ import annotations

import itertools
import subprocess
from pathlib import Path

import pytest
from launch_helpers import SCRIPTS, Launch, line_of, tool

TOGETHER = str(SCRIPTS / "together.py")
STOPS = 6


@pytest.mark.timeout(240)
def test_stepping_at_once_keeps_every_stopped_event_in_order(tmp_path: Path) -> None:
    line = line_of("together.py", "# SLEEP")
    launch = Launch(["--ranks", "0", "--stop", "alone", "--", tool("torchrun"),
                     "--nproc_per_node", "2", TOGETHER], tmp_path, stdin=subprocess.PIPE)
    try:
        (client,) = launch.clients(1).values()
        client.attach({TOGETHER: [line]})
        mark = 0
        for _ in range(STOPS):
            stop = client.wait_event("stopped", 60, mark)
            mark = client.events.index(stop) + 1
            client.send("next", {"threadId": stop["body"]["threadId"]})  # at once
        stop = client.wait_event("stopped", 60, mark)
        client.request("setBreakpoints", {"source": {"path": TOGETHER}, "breakpoints": []})
        (tmp_path / "done").write_text("")
        client.request("continue", {"threadId": stop["body"]["threadId"]})
        assert launch.exited(120) == 0
        said = [e["event"] for e in launch.events
                if e.get("rank") == 0 and e.get("event") in ("stopped", "continued")]
        print(f"rank 0's events after stepping at once {STOPS} times: {said}")
        assert said.count("stopped") >= STOPS + 1, said
        for before, after in itertools.pairwise(said):
            assert before != after, said  # stopped, continued, stopped, ...
        assert said[0] == "stopped", said
    finally:
        launch.close()

"""Lightning's copies of rank 0 are ranks (Lightning Fabric installed, gloo on the CPU, real
debugpy): ``python script.py`` whose ``Fabric(devices=2)`` re-runs the script for rank 1 with
LOCAL_RANK=1. The copy inherits rank 0's environment, the bootstrap's RANKDEBUG_ACTED
included; it is taken for rank 1 (``bootstrap.helper_of_rank``), not for rank 0's helper:
chosen, it stops at a breakpoint; armed, it is listed and attached later. A helper started by
a rank as that rank still does nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from launch_helpers import SCRIPTS, Launch, line_of, read_json, wait_for

from dap_client import DAPClient
from rankdebug.runtime import bootstrap

pytestmark = pytest.mark.timeout(240)


def _stop_here(client: DAPClient, script: str, rank: int) -> None:
    """The client's rank stops at the script's BREAK line as Fabric's rank ``rank`` of 2, then
    runs on with no breakpoint."""
    path, line = str(SCRIPTS / script), line_of(script)
    client.attach({path: [line]})
    stopped = client.stopped(timeout=90)
    assert stopped["reason"] == "breakpoint"
    frame = client.top_frame(int(stopped["threadId"]))
    assert (frame["source"]["path"], frame["line"]) == (path, line)
    assert client.evaluate("fabric.global_rank", frame["id"]) == str(rank)
    assert client.evaluate("fabric.world_size", frame["id"]) == "2"
    assert client.evaluate("os.environ['LOCAL_RANK']", frame["id"]) == repr(str(rank))
    client.request("setBreakpoints", {"source": {"path": path}, "breakpoints": []})
    client.cont(int(stopped["threadId"]))


def test_choosing_rank_1_stops_lightnings_copy_of_the_script(tmp_path: Path) -> None:
    script = "fabric_ddp_script.py"
    launch = Launch(["--ranks", "1", "--", sys.executable, script], tmp_path)
    try:
        job = launch.event("job")
        assert (job["launcher"], job["ranks"]) == ("lightning", [1])
        ev = launch.event("listening", 120)
        assert ev["rank"] == 1
        client = DAPClient(str(ev["host"]), int(ev["port"]), timeout=90)
        try:
            _stop_here(client, script, 1)
            assert launch.exited() == 0, launch.stderr()
        finally:
            client.close()
        assert "has not started" not in launch.stderr()
    finally:
        launch.close()
    zero, one = read_json(tmp_path / "rank-0.json"), read_json(tmp_path / "rank-1.json")
    # Rank 0 (the script's own process) ran untraced; the copy carried the debugger.
    assert (zero["debugpy"], one["debugpy"]) == (False, True)
    assert (one["rank"], one["local_rank"], zero["total"], one["total"]) == (1, "1", 3.0, 3.0)


def _jobs(job: str) -> dict[str, Any] | None:
    out = subprocess.run([sys.executable, "-m", "rankdebug", "jobs", "--json"],
                         capture_output=True, text=True, timeout=60, check=False)
    for found in json.loads(out.stdout)["jobs"]:
        if found["id"] == job:
            return dict(found)
    return None


def test_an_armed_lightning_job_lists_its_copy_as_rank_1_and_attaches_to_it(
        tmp_path: Path) -> None:
    script = "fabric_armed_script.py"
    launch = Launch(["--arm", "--", sys.executable, script], tmp_path)
    try:
        job = str(launch.event("job")["job"])
        pids = wait_for("both ranks ready", lambda: {r: int((tmp_path / f"ready-{r}")
                        .read_text()) for r in (0, 1)} if all((tmp_path / f"ready-{r}")
                        .exists() for r in (0, 1)) else None, 150)

        def listed() -> dict[int, dict[str, Any]] | None:
            found = _jobs(job)
            listed = (found or {}).get("ranks", [])
            ranks = {r["rank"]: r for r in listed}
            # One row per rank (the scan's view of the copy, LOCAL_RANK alone, is its row).
            return ranks if len(listed) == 2 and set(ranks) == {0, 1} and all(
                r["armed"] for r in listed) else None

        ranks = wait_for("ranks 0 and 1 armed, listed once each", listed, 60)
        assert {r: ranks[r]["pid"] for r in (0, 1)} == pids
        # The copy is rank 0's child: its parent's pid is rank 0's.
        ppid = int(Path(f"/proc/{pids[1]}/stat").read_text().rsplit(")", 1)[1].split()[1])
        assert ppid == pids[0]
        got = subprocess.run([sys.executable, "-m", "rankdebug", "attach", job, "1", "--json"],
                             capture_output=True, text=True, timeout=90, check=False)
        ev = json.loads(got.stdout.strip().splitlines()[-1])
        assert (ev["event"], ev["rank"]) == ("listening", 1), got.stderr
        client = DAPClient(str(ev["host"]), int(ev["port"]), timeout=90)
        try:
            _stop_here(client, script, 1)
        finally:
            client.disconnect()
        (tmp_path / "stop").touch()
        assert launch.exited() == 0, launch.stderr()
    finally:
        (tmp_path / "stop").touch()
        launch.close()


def test_a_process_a_rank_starts_as_itself_is_its_helper_and_a_copy_as_another_is_not(
) -> None:
    lightning = {"RANKDEBUG_RANKVARS": "RANK/LOCAL_RANK/WORLD_SIZE,"
                 "LOCAL_RANK/LOCAL_RANK/WORLD_SIZE,=0",
                 "RANKDEBUG_ACTED": "100", "RANKDEBUG_ACTED_RANK": "0"}
    # Rank 0 itself, and its DataLoader worker (before and after Lightning sets LOCAL_RANK=0).
    assert not bootstrap.helper_of_rank(lightning, 100)
    assert bootstrap.helper_of_rank(lightning, 101)
    assert bootstrap.helper_of_rank({**lightning, "LOCAL_RANK": "0"}, 101)
    # Lightning's copy for local rank 1: a rank.
    assert not bootstrap.helper_of_rank({**lightning, "LOCAL_RANK": "1"}, 102)
    # A torchrun rank's subprocess has its RANK: a helper; an older bootstrap's mark (no
    # ACTED_RANK) keeps every child a helper; no mark at all: no helper.
    torch = {"RANK": "3", "LOCAL_RANK": "3", "RANKDEBUG_ACTED": "7",
             "RANKDEBUG_ACTED_RANK": "3"}
    assert bootstrap.helper_of_rank(torch, 8)
    assert bootstrap.helper_of_rank({"RANK": "5", "RANKDEBUG_ACTED": "7"}, 8)
    assert not bootstrap.helper_of_rank({"RANK": "5"}, 8)
    # A child with no rank variable at all (a tool a rank runs) is a helper.
    assert bootstrap.helper_of_rank({"RANKDEBUG_ACTED": "7", "RANKDEBUG_ACTED_RANK": "3",
                                     "RANKDEBUG_RANKVARS": "RANK/LOCAL_RANK/WORLD_SIZE"}, 8)

"""``rankdebug launch --ranks 'tp=0'``: a selector resolved through the layout the command's
Megatron flags give, on a real torchrun job (gloo, CPU) with real debugpy."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from launch_helpers import SCRIPTS, Launch, line_of, read_json, tool

pytestmark = pytest.mark.timeout(240)

STANDIN = str(SCRIPTS / "megatron_standin.py")


def test_tp0_debugs_ranks_0_and_2_of_tp2_over_4_ranks(tmp_path: Path) -> None:
    line = line_of("megatron_standin.py")
    launch = Launch(["--ranks", "tp=0", "--", tool("torchrun"), "--nproc_per_node", "4",
                     STANDIN, "--tensor-model-parallel-size", "2",
                     "--pipeline-model-parallel-size", "1"], tmp_path)
    try:
        job = launch.event("job")
        assert job["ranks"] == [0, 2] and job["rank_spec"] == "0,2"
        clients = launch.clients(2, timeout=120)
        assert sorted(clients) == [0, 2]
        for client in clients.values():  # both attached before either runs into the other
            client.attach({STANDIN: [line]})
        threads = {}
        for rank, client in clients.items():
            thread = int(client.stopped(timeout=120)["threadId"])
            frame = client.top_frame(thread)
            assert frame["line"] == line
            assert client.evaluate('int(os.environ["RANK"])', frame["id"]) == str(rank)
            client.request("setBreakpoints", {"source": {"path": STANDIN}, "breakpoints": []})
            threads[rank] = thread
        for rank, client in clients.items():
            client.cont(threads[rank])
        assert launch.exited(timeout=180) == 0
    finally:
        launch.close()
    debugged = {r: read_json(tmp_path / f"rank-{r}.json")["debugpy"] for r in range(4)}
    assert debugged == {0: True, 1: False, 2: True, 3: False}


def _refused(ranks: str, *command: str) -> dict[str, object]:
    """``rankdebug launch --json --ranks RANKS -- torchrun ...`` that must stop before it
    starts anything: its error envelope."""
    done = subprocess.run(
        [sys.executable, "-m", "rankdebug", "launch", "--json", "--ranks", ranks, "--",
         tool("torchrun"), "--nproc_per_node", "4", STANDIN, *command],
        cwd=SCRIPTS, capture_output=True, text=True, timeout=90, check=False)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    error: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])["error"]
    return error


@pytest.mark.parametrize(("ranks", "column", "words"), [
    ("xp=0", 1, "unknown dimension 'xp': this job has tp, dp, pp"),
    ("pp=0 tp=2", 9, "tp=2 is past the job's tp (size 2: tp=0-1)"),
    ("1,tp=0", 1, "cannot be mixed"),
    ("tp=", 4, "tp= needs a value"),
])
def test_bad_selectors_stop_before_anything_runs(ranks: str, column: int, words: str) -> None:
    error = _refused(ranks, "--tensor-model-parallel-size", "2")
    assert words in str(error["message"]) and error["column"] == column


def test_a_selector_without_parallel_sizes_says_where_they_come_from() -> None:
    message = str(_refused("tp=0")["message"])
    assert "not known" in message and "--tensor-model-parallel-size" in message


def test_sizes_the_world_cannot_hold_are_said_as_megatron_would() -> None:
    # tp 8 over 4 ranks: Megatron would stop at start-up, so there is no layout to select in.
    message = str(_refused("tp=0", "--tensor-model-parallel-size", "8")["message"])
    assert "do not fit" in message
    assert "'world_size (4) is not divisible by 8'" in message

"""Compare Across Ranks from the command line (``rankdebug eval JOB RANKS CODE``), for real:
torchrun, gloo on the CPU, real debugpy.

An armed 4-rank job where rank 2's weights differ in one element by 1e-3 and rank 1's
gradient holds a NaN: the ranks are grouped by checksum, the odd element is named, a
tolerance puts rank 2 back; the code runs as a small REPL (statements, print captured, an
import, a lambda over a local, a library frame's arguments, errors placed in the text). Then
two chosen ranks paused at a breakpoint under debugpy answer the same command.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from launch_helpers import SCRIPTS, Launch, line_of, tool, wait_for

import wire_check
from dap_client import DAPClient

pytestmark = pytest.mark.timeout(240)

SCRIPT = "compare_job.py"
NPROC = 4
ODD_INDEX = 1234  # compare_job.ODD_INDEX: rank 2's odd element


def rankdebug(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "rankdebug", *args], capture_output=True,
                          text=True, timeout=60, check=False, cwd=SCRIPTS)
    return wire_check.checked(args, done)  # --json lines as declared


def lines(out: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    assert out.stdout.strip(), out.stderr
    return [json.loads(line) for line in out.stdout.splitlines()]


def groups(out: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    last = lines(out)[-1]
    assert last["event"] == "compare", last
    found: list[dict[str, Any]] = last["groups"]
    return found


class Job:
    def __init__(self, tmp: Path, nproc: int, *options: str) -> None:
        self.tmp = tmp
        self.nproc = nproc
        self.launch = Launch([*options, "--", tool("torchrun"), "--standalone",
                              "--nproc_per_node", str(nproc), SCRIPT], tmp)
        self.id = str(self.launch.event("job")["job"])

    def ready(self) -> None:
        wait_for("every rank ready", lambda: all((self.tmp / f"ready-{r}").exists()
                                                 for r in range(self.nproc)), 120)

    def end(self) -> None:
        for name in ("go", "stop"):
            (self.tmp / name).touch()
        with contextlib.suppress(AssertionError):
            self.launch.wait(60)
        self.launch.close()


@pytest.fixture(scope="module")
def armed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Job]:
    job = Job(tmp_path_factory.mktemp("compare"), NPROC, "--arm")
    try:
        job.ready()
        wait_for("every rank's handler in `rankdebug jobs`", lambda: all(
            r.get("socket") for j in json.loads(rankdebug("jobs", "--json").stdout)["jobs"]
            if j["id"] == job.id for r in j["ranks"]) and _ranks(job) == NPROC, 60)
        yield job
    finally:
        job.end()


def _ranks(job: Job) -> int:
    for j in json.loads(rankdebug("jobs", "--json").stdout)["jobs"]:
        if j["id"] == job.id:
            return len(j["ranks"])
    return 0


def test_a_tensor_that_differs_in_one_element_is_named_with_the_element(armed: Job) -> None:
    out = rankdebug("eval", armed.id, "all", "weight", "--json")
    assert out.returncode == 0, out.stderr
    results = lines(out)[:-1]
    assert [r["rank"] for r in results] == [0, 1, 2, 3]
    assert all(r["event"] == "result" and r["type"] == "Tensor" for r in results)
    summary = results[0]["summary"]
    assert summary["shape"] == [64, 64] and summary["dtype"] == "torch.float32"
    assert summary["nan"] == 0 and summary["inf"] == 0 and len(summary["checksum"]) == 32
    assert summary["min"] < summary["mean"] < summary["max"] and summary["norm"] > 0
    assert results[2]["summary"]["checksum"] != summary["checksum"]
    assert results[2]["summary"]["mean"] != pytest.approx(summary["mean"], abs=1e-9)
    found = groups(out)
    assert [g["ranks"] for g in found] == [[0, 1, 3], [2]]
    differs = found[1]["differs"]
    assert (differs["from"], differs["first"], differs["last"]) == (0, ODD_INDEX, ODD_INDEX)
    assert differs["at"] == [ODD_INDEX // 64, ODD_INDEX % 64] and differs["exact"] is True
    close = groups(rankdebug("eval", armed.id, "all", "weight", "--json", "--tolerance", "1e-2"))
    assert [g["ranks"] for g in close] == [[0, 1, 2, 3]]
    tight = groups(rankdebug("eval", armed.id, "all", "weight", "--json", "--tolerance", "1e-4"))
    assert [g["ranks"] for g in tight] == [[0, 1, 3], [2]]
    table = rankdebug("eval", armed.id, "0-3", "weight")
    assert table.returncode == 0
    marked = [line for line in table.stdout.splitlines() if line.startswith("*")]
    assert len(marked) == 1 and "rank   2" in marked[0], table.stdout
    assert f"differs from rank 0 at element {ODD_INDEX}" in table.stdout


def test_a_nan_is_counted_and_keeps_its_rank_apart_within_a_tolerance(armed: Job) -> None:
    for tolerance in ([], ["--tolerance", "0.5"]):
        out = rankdebug("eval", armed.id, "all", "grad", "--json", *tolerance)
        results = lines(out)[:-1]
        assert [r["summary"]["nan"] for r in results] == [0, 1, 0, 0]
        assert results[1]["summary"]["mean"] == 1.0  # over the finite elements
        found = groups(out)
        assert [g["ranks"] for g in found] == [[0, 2, 3], [1]]
        assert found[1]["differs"]["first"] == 3


def test_numbers_compare_by_value_and_within_a_tolerance(armed: Job) -> None:
    exact = groups(rankdebug("eval", armed.id, "all", "scale[0] * 0.001", "--json"))
    assert len(exact) == NPROC
    close = groups(rankdebug("eval", armed.id, "all", "scale[0] * 0.001", "--json",
                             "--tolerance", "0.01"))
    assert [g["ranks"] for g in close] == [[0, 1, 2, 3]]
    same = groups(rankdebug("eval", armed.id, "1,3", "len(scale)", "--json"))
    assert same == [{"ranks": [1, 3], "text": "2"}]


def test_eval_is_a_small_repl(armed: Job) -> None:
    code = ("import math\nprint('seen by eval', scale)\n"
            "roots = [math.sqrt(x) for x in scale]\n(lambda: sum(roots) + scale[1])()")
    out = rankdebug("eval", armed.id, "3", code, "--json")
    result = lines(out)[0]
    assert result["text"] == str(math_value(3)), result
    assert result["output"] == "seen by eval [3, 6]\n"
    assert "seen by eval" not in armed.launch.stderr()
    again = lines(rankdebug("eval", armed.id, "3", "roots[1] ** 2", "--json"))[0]
    assert float(again["text"]) == pytest.approx(6.0)  # names assigned earlier live on
    plain = rankdebug("eval", armed.id, "0", "x = 5")
    assert plain.returncode == 0 and plain.stdout.strip() == "None"
    syntax = lines(rankdebug("eval", armed.id, "0", "a = 1\nb = a +", "--json"))[0]
    assert syntax["event"] == "error" and syntax["message"].startswith("line 2, column 8:")
    raised = rankdebug("eval", armed.id, "0", "a = 1\nb = 0\nc = a / b", "--json")
    assert raised.returncode == 1
    error = lines(raised)[0]
    assert error["message"] == "line 3: ZeroDivisionError: division by zero"
    assert error["line"] == 3


def math_value(rank: int) -> float:
    import math

    return math.sqrt(rank) + math.sqrt(rank * 2) + rank * 2


def test_frames_by_name_and_index_reach_library_frames(armed: Job) -> None:
    step = lines(rankdebug("eval", armed.id, "0-2", "self.global_step", "--json",
                           "--frame", "training_step"))
    assert [r["text"] for r in step[:-1]] == ["1", "1", "1"]
    lib = lines(rankdebug("eval", armed.id, "0", "tensor.shape", "--json",
                          "--frame", "all_reduce"))[0]
    assert lib["text"] == "torch.Size([1])", lib
    top = lines(rankdebug("eval", armed.id, "0", "__import__('sys')._getframe(0).f_back",
                          "--json", "--frame", "0"))[0]
    assert top["event"] == "result"
    missing = lines(rankdebug("eval", armed.id, "0", "1", "--json", "--frame", "nowhere"))[0]
    assert missing["event"] == "error" and "'nowhere'" in missing["message"]


def test_bad_requests_exit_2_with_a_message(armed: Job) -> None:
    bad = rankdebug("eval", armed.id, "1-", "1", "--json")
    assert bad.returncode == 2 and "RANKS" in json.loads(bad.stdout)["error"]["message"]
    missing = rankdebug("eval", armed.id, "0,9", "1")
    assert missing.returncode == 2 and "has no rank 9" in missing.stderr
    nojob = rankdebug("eval", "no-such-job", "0", "1", "--json")
    assert nojob.returncode == 2 and "no job" in json.loads(nojob.stdout)["error"]["message"]


def test_chosen_ranks_paused_under_the_debugger_answer_too(tmp_path: Path) -> None:
    # Each rank to its own breakpoint: stopping together, the first stop could pause the
    # other before its line (reason "pause"), which is not what this test reads.
    job = Job(tmp_path, 2, "--ranks", "all", "--stop", "alone")
    clients: dict[int, DAPClient] = {}
    try:
        path = str(SCRIPTS / SCRIPT)
        clients.update(job.launch.clients(2))
        for client in clients.values():
            client.attach({path: [line_of(SCRIPT)]})
        (tmp_path / "go").touch()
        stopped = {rank: client.stopped() for rank, client in clients.items()}
        assert all(s["reason"] == "breakpoint" for s in stopped.values())
        for client in clients.values():  # the handler's threads are not the user's to see
            names = [t["name"] for t in client.request("threads")["threads"]]
            assert not [n for n in names if "rankdebug" in n], names
        out = rankdebug("eval", job.id, "all", "t", "--json", "--function", "training_step")
        assert out.returncode == 0, out.stdout + out.stderr
        assert [g["ranks"] for g in groups(out)] == [[0, 1]]
        weights = groups(rankdebug("eval", job.id, "all", "self.weight", "--json",
                                   "--frame", "training_step"))
        assert [g["ranks"] for g in weights] == [[0, 1]]
        top = lines(rankdebug("eval", job.id, "1", "t.shape", "--json", "--frame", "0"))[0]
        assert top.get("text") == "torch.Size([1])", top  # the breakpoint's frame, not pydevd's
        for client in clients.values():
            client.request("setBreakpoints", {"source": {"path": path}, "breakpoints": []})
        (tmp_path / "stop").touch()
        for rank, client in clients.items():
            client.cont(int(stopped[rank]["threadId"]))
        assert job.launch.exited(60) == 0
    finally:
        for client in clients.values():
            client.close()
        job.end()


def test_a_healthy_running_loop_is_never_the_odd_one_out(armed: Job) -> None:
    (armed.tmp / "go").touch()  # every rank now steps: all_reduce, then a short sleep
    for _ in range(3):
        report = json.loads(rankdebug("stacks", armed.id, "--json").stdout)
        # Three reads while ranks are apart; one when the first finds them all together.
        assert 1 <= report["samples"] <= 3
        assert report["odd"] == [], report["groups"]
        assert report["collectives"] == [], report["collectives"]
        assert sum(root["count"] for root in report["tree"]) == NPROC


def test_a_skipped_collective_names_the_rank_and_the_numbers(tmp_path: Path) -> None:
    launch = Launch(["--arm", "--", tool("torchrun"), "--standalone", "--nproc_per_node", "4",
                     "skip_collective.py"], tmp_path)
    try:
        job = str(launch.event("job")["job"])

        def stuck() -> dict[str, Any] | None:
            out = rankdebug("stacks", job, "--json", "--samples", "2")
            report: dict[str, Any] = json.loads(out.stdout) if out.stdout else {}
            return report if len(report.get("collectives", [])) == 2 else None

        report = wait_for("ranks 0-2 in all_reduce, rank 3 in the barrier", stuck, 120)
        first, second = report["collectives"]
        assert first["message"] == ("group 0 (default_pg): rank 3 is past #5, in none of its "
                                    "collectives; ranks 0-2 at all_reduce #6")
        assert first["odd"] == [3] and second["odd"] == [3]
        assert second["message"].startswith("group 1 (sync): rank 3 is at barrier #1;")
        assert report["odd"] == [3]
        by_rank = {r["rank"]: r for r in report["ranks"]}
        assert by_rank[3]["collectives"]["current"]["op"] == "barrier"
        text = rankdebug("stacks", job, "--tree").stdout
        assert "collectives: group 0 (default_pg): rank 3 is past #5" in text
        tree = [line.split() for line in text.splitlines() if "/4" in line]
        assert tree[0][:2] == ["4/4", "<module>"]
        assert any(row[:2] == ["3/4", "train_step"] for row in tree), text
        assert any(row[:2] == ["1/4", "·barrier"] for row in tree), text
    finally:
        launch.close()

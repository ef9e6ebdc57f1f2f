"""Collectives as the job issues them: DDP's bucket all_reduce (issued from C++ inside
``backward``), its bucket rebuild's broadcast (inside ``DistributedDataParallel._pre_forward``)
and FSDP2's all_gather (``fully_shard`` on gloo) are the collectives a rank waits in, with
their numbers from the Flight Recorder and who issued them, in ``rankdebug stacks`` (its
rows, its JSON, the disagreement on group 0), in the ``stopped`` and ``blocked`` events of
``rankdebug launch --json``, in the client's stop and in ``rankdebug jobs --json``. A rank
that waits in one is never "in none of its collectives". Pieces first, then real torchrun
jobs on gloo (ddp_late.py: rank 1 is late at a chosen point, rank 0 waits for it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import torch.autograd.graph
import torch.nn.parallel.distributed
from launch_helpers import SCRIPTS, Launch, line_of, tool, wait_for

import wire_check
from dap_client import DAPClient
from rankdebug.jobs.analysis.collective_check import check
from rankdebug.runtime import collectives, handler, wire

SCRIPT = "ddp_late.py"


# --- the pieces -------------------------------------------------------------------------------

def _line_holding(path: str, text: str) -> int:
    with open(path) as f:
        return next(n for n, line in enumerate(f, 1) if text in line)


USER = str(SCRIPTS / SCRIPT)
GRAPH = torch.autograd.graph.__file__
DDP = torch.nn.parallel.distributed.__file__
TENSOR = os.path.join(os.path.dirname(torch.__file__), "_tensor.py")
MODULE = os.path.join(os.path.dirname(torch.__file__), "nn", "modules", "module.py")
C10D = os.path.join(os.path.dirname(torch.__file__), "distributed", "distributed_c10d.py")
LOGGER = os.path.join(os.path.dirname(torch.__file__), "distributed", "c10d_logger.py")
FSDP = os.path.join(os.path.dirname(torch.__file__), "distributed", "fsdp", "_fully_shard",
                    "_fsdp_collectives.py")
SITE = os.path.dirname(os.path.dirname(torch.__file__))


@pytest.mark.parametrize(("frames", "said"), [
    # DDP's reducer, from autograd's engine (C++): no torch.distributed frame on top.
    ([("_engine_run_backward", GRAPH, 979), ("backward", TENSOR, 623), ("main", USER, 57)],
     "DDP bucket, from backward"),
    # The rebuild, at the line of DDP's _pre_forward that calls it.
    ([("_pre_forward", DDP, _line_holding(DDP, "self.reducer._rebuild_buckets()")),
      ("forward", DDP, 1), ("_call_impl", MODULE, 1), ("_wrapped_call_impl", MODULE, 1),
      ("main", USER, 55)], "DDP bucket rebuild, from forward"),
    # Another line of _pre_forward: DDP's, not its rebuild.
    ([("_pre_forward", DDP, 1), ("forward", DDP, 1), ("main", USER, 55)], "DDP, from forward"),
    # A library's Python call of torch.distributed, under the user's forward.
    ([("all_gather_single", C10D, 1), ("wrapper", LOGGER, 83), ("__call__", FSDP, 119),
      ("forward", MODULE, 1), ("_call_impl", MODULE, 1), ("main", USER, 55)],
     "FSDP, from forward"),
    # DDP's constructor.
    ([("_sync_params_and_buffers", os.path.join(SITE, "torch", "distributed", "utils.py"), 1),
      ("__init__", DDP, 1), ("main", USER, 50)], "DDP init"),
    # Any other package: its call the user's code made.
    ([("all_gather", C10D, 1), ("wrapper", LOGGER, 83),
      ("gather", os.path.join(SITE, "accelerate", "utils", "operations.py"), 1),
      ("main", USER, 9)], "Accelerate, from gather"),
    # The user's own call: nothing to add.
    ([("all_reduce", C10D, 1), ("wrapper", LOGGER, 83), ("train_step", USER, 9)], None),
])
def test_who_issued_a_collective_from_its_stack(frames: list[tuple[str, str, int]],
                                                said: str | None) -> None:
    assert collectives.context(frames) == said


def test_a_collective_s_label() -> None:
    assert collectives.label("all_reduce", 5, "0", "DDP bucket, from backward") == (
        "all_reduce #5 (DDP bucket, from backward)")
    assert collectives.label("barrier", 3, "1") == "barrier #3 (group 1)"
    assert collectives.label("all_reduce", None, "0") == "all_reduce"
    assert collectives.label("all_gather", 7, "2", "FSDP, from forward") == (
        "all_gather #7 (FSDP, from forward, group 2)")


def _state(issued: int, opened: dict[str, Any] | None, recorder: bool = True
           ) -> dict[str, Any]:
    return {"current": None, "recorder": recorder, "groups": {"0": {
        "desc": "default_pg", "ranks": [0, 1], "issued": issued, "done": issued - 1,
        "open": opened}}}


def test_an_open_entry_is_where_the_rank_is_whatever_its_stack_shows() -> None:
    opened = {"op": "all_reduce", "seq": 4, "context": "DDP bucket, from backward"}
    (found,) = check({0: _state(4, opened), 1: _state(3, None), 2: _state(4, opened)})
    assert found["message"] == ("group 0 (default_pg): rank 1 is past #3, in none of its "
                                "collectives; ranks 0,2 at all_reduce #4 (DDP bucket, from "
                                "backward)")
    assert found["odd"] == [1]
    assert found["positions"][0] == {"ranks": [0, 2], "op": "all_reduce", "seq": 4,
                                     "context": "DDP bucket, from backward"}
    # Without a recorder a rank's stack is all there is: said so, not "in none".
    (off,) = check({0: _state(4, None, recorder=False), 1: _state(3, None, recorder=False)})
    assert "in none" not in off["message"], off
    assert off["message"].endswith("rank 0 past #4, in no collective on its Python stack "
                                   "(its Flight Recorder is off)"), off


def test_states_of_the_wrong_shape_are_passed_over() -> None:
    states: dict[int, Any] = {0: {"groups": []}, 1: {"groups": {"0": "x"}}, 2: "nothing"}
    assert check(states) == []


# --- real jobs: rankdebug stacks ----------------------------------------------------------------

def rankdebug(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "rankdebug", *args], capture_output=True,
                          text=True, timeout=90, check=False, cwd=SCRIPTS)
    return wire_check.checked(args, done)  # --json lines as declared


def _armed(tmp: Path, env: dict[str, str]) -> Launch:
    return Launch(["--arm", "--", tool("torchrun"), "--standalone", "--nproc_per_node", "2",
                   SCRIPT], tmp, env={"LATE_RANK": "1", **env})


def _rank0_in_one(job: str) -> dict[str, Any] | None:
    """``rankdebug stacks JOB --json`` once rank 0 is read in a collective (both reads)."""
    out = rankdebug("stacks", job, "--json", "--samples", "2")
    report: dict[str, Any] = json.loads(out.stdout) if out.stdout.strip() else {}
    ranks = {r["rank"]: r for r in report.get("ranks", [])}
    return report if ranks.get(0, {}).get("collective") else None


@pytest.mark.timeout(240)
@pytest.mark.parametrize(("env", "op", "context"), [
    ({"LATE_AT": "backward", "LATE_STEP": "0"}, "all_reduce", "DDP bucket, from backward"),
    ({"LATE_AT": "forward", "LATE_STEP": "1"}, "broadcast", "DDP bucket rebuild, from forward"),
    ({"MODE": "fsdp", "LATE_AT": "forward", "LATE_STEP": "1"}, "all_gather",
     "FSDP, from forward"),
], ids=["ddp-backward", "ddp-rebuild", "fsdp-forward"])
def test_a_rank_waiting_in_a_collective_torch_issues_is_in_it(
        tmp_path: Path, env: dict[str, str], op: str, context: str) -> None:
    launch = _armed(tmp_path, env)
    try:
        job = str(launch.event("job")["job"])
        wait_for("rank 1 late", (tmp_path / "late-1").exists, 120)
        report = wait_for("rank 0 read in a collective", lambda: _rank0_in_one(job), 120)
        ranks = {r["rank"]: r for r in report["ranks"]}
        late_at = ranks[1]["collectives"]["groups"]["0"]["issued"]
        seq = late_at + 1  # the next one: rank 1 has not issued it
        text = f"{op} #{seq} ({context})"
        current = ranks[0]["collectives"]["current"]
        assert current == dict(current, op=op, seq=seq, group="0", source="flight recorder",
                               context=context, label=text), current
        assert ranks[0]["collectives"]["groups"]["0"]["open"] == {
            "op": op, "seq": seq, "context": context}
        assert ranks[0]["collective"] == dict(ranks[0]["collective"], name=op, seq=seq,
                                              group="0", context=context, label=text)
        assert ranks[1]["collective"] is None
        assert ranks[1]["collectives"]["current"] is None
        assert ranks[1]["collectives"]["groups"]["0"]["open"] is None
        row = next(g for g in report["groups"] if g["main"] and g["ranks"] == [0])
        assert (row["collective"], row["collective_text"]) == (op, text), row
        (found,) = report["collectives"]
        assert found["message"] == (f"group 0 (default_pg): rank 1 is past #{late_at}, in "
                                    f"none of its collectives; rank 0 at {text}"), found
        plain = rankdebug("stacks", job).stdout
        assert f"[waiting in {text}]" in plain, plain
        assert "rank 0 past" not in plain and "rank 0 is past" not in plain, plain
        (tmp_path / "go").touch()
        assert launch.exited(120) == 0
    finally:
        launch.close()


@pytest.mark.timeout(240)
def test_without_the_flight_recorder_the_check_says_it_saw_only_the_stack(
        tmp_path: Path) -> None:
    """TORCH_FR_BUFFER_SIZE=0: DDP's all_reduce inside backward leaves no trace a rank can
    read; the disagreement says the ranks were read from their stacks alone."""
    launch = _armed(tmp_path, {"LATE_AT": "backward", "TORCH_FR_BUFFER_SIZE": "0"})
    try:
        job = str(launch.event("job")["job"])
        wait_for("rank 1 late", (tmp_path / "late-1").exists, 120)

        def disagree() -> dict[str, Any] | None:
            out = rankdebug("stacks", job, "--json", "--samples", "2")
            report: dict[str, Any] = json.loads(out.stdout) if out.stdout.strip() else {}
            return report if report.get("collectives") else None

        report = wait_for("the ranks read apart", disagree, 120)
        ranks = {r["rank"]: r for r in report["ranks"]}
        assert ranks[0]["collectives"]["recorder"] is False
        assert ranks[0]["collectives"]["current"] is None
        (found,) = report["collectives"]
        assert "in none" not in found["message"], found
        assert "(its Flight Recorder is off)" in found["message"], found
        (tmp_path / "go").touch()
        assert launch.exited(120) == 0
    finally:
        launch.close()


# --- real jobs: rankdebug launch --json --control -------------------------------------------------

def _asked(job_dir: str, rank: int) -> dict[str, Any]:
    """Rank ``rank``'s own account of its collectives (its handler)."""
    reply = wire.ask(handler.socket_path(job_dir, rank), {"command": "collectives"},
                     timeout=10)
    state: dict[str, Any] = reply["collectives"]
    return state


def _jobs_rank(job: str, rank: int) -> dict[str, Any]:
    (found,) = json.loads(rankdebug("jobs", job, "--json", "--no-gpu").stdout)["jobs"]
    entry: dict[str, Any] = next(r for r in found["ranks"] if r["rank"] == rank)
    return entry


def _controlled(tmp: Path) -> Launch:
    return Launch(["--ranks", "all", "--control", "--", tool("torchrun"), "--nproc_per_node",
                   "2", SCRIPT], tmp, env={"LATE_RANK": "1", "LATE_AT": "backward"},
                  stdin=subprocess.PIPE)


@pytest.mark.timeout(240)
def test_a_peer_paused_in_ddp_s_backward_is_shown_waiting_in_its_all_reduce(
        tmp_path: Path) -> None:
    """Rank 1, late before its backward, stops at a breakpoint while rank 0 waits in DDP's
    bucket all_reduce inside ``backward``: rank 0 is shown paused waiting in all_reduce #N
    of group 0, issued by DDP's bucket from backward (was: waiting in
    ``_engine_run_backward``, no number), in the ``stopped`` event, its client's stop and
    ``rankdebug jobs --json``."""
    late = line_of(SCRIPT, "# LATE")
    launch = _controlled(tmp_path)
    clients: dict[int, DAPClient] = {}
    try:
        clients.update(launch.clients(2))
        clients[0].attach({})
        clients[1].attach({})
        job_dir = str(launch.event("job")["dir"])
        wait_for("rank 1 late", (tmp_path / "late-1").exists, 120)
        wait_for("rank 0 in DDP's all_reduce",
                 lambda: (_asked(job_dir, 0)["groups"]["0"]["open"] or {}).get("op")
                 == "all_reduce", 60)
        seq = _asked(job_dir, 1)["groups"]["0"]["issued"] + 1
        mark = len(clients[0].events)
        clients[1].request("setBreakpoints", {"source": {"path": USER},
                                              "breakpoints": [{"line": late}]})
        stops: dict[int, dict[str, Any]] = {}
        while len(stops) < 2:
            ev = launch.event("stopped", 60)
            stops[int(ev["rank"])] = ev
        assert (stops[1]["reason"], stops[1]["line"]) == ("breakpoint", late), stops
        shown = stops[0]
        assert (shown.get("waiting"), shown.get("seq"), shown.get("group"),
                shown.get("context")) == ("all_reduce", seq, "0", "DDP bucket, from backward"), \
            shown
        body = clients[0].wait_event("stopped", 30, after=mark)["body"]
        assert body["description"] == (f"Paused: waiting in all_reduce #{seq} (DDP bucket, "
                                       "from backward)"), body
        assert launch.job is not None
        entry = _jobs_rank(launch.job, 0)
        assert entry["state"] == "paused", entry
        assert entry["collective"] == {"name": "all_reduce", "seq": seq, "group": "0"}, entry
        (tmp_path / "go").touch()
        clients[1].request("setBreakpoints", {"source": {"path": USER}, "breakpoints": []})
        launch.command({"command": "continue"})
        assert launch.exited(120) == 0
    finally:
        for client in clients.values():
            client.close()
        launch.close()


@pytest.mark.timeout(240)
def test_a_step_over_ddp_s_backward_is_blocked_in_its_all_reduce(tmp_path: Path) -> None:
    """Rank 0 stops at ``loss.backward()`` (rank 1, late, is paused before its own) and
    steps over it alone: it is reported ``blocked`` in all_reduce #N of group 0 from DDP's
    bucket (the event and ``rankdebug jobs --json``); rank 1 let go, the step arrives."""
    backward = line_of(SCRIPT, "# BACKWARD")
    launch = _controlled(tmp_path)
    clients: dict[int, DAPClient] = {}
    try:
        clients.update(launch.clients(2))
        clients[0].attach({USER: [backward]})
        clients[1].attach({})
        job_dir = str(launch.event("job")["dir"])
        first = launch.event("stopped", 90)
        assert (first["rank"], first["reason"], first["line"]) == (0, "breakpoint", backward)
        while True:  # rank 1 is paused by stop together, for real (it runs Python)
            ev = launch.event("stopped", 60)
            if ev["rank"] == 1 and not ev.get("waiting"):
                break
        seq = _asked(job_dir, 1)["groups"]["0"]["issued"] + 1
        asked = time.monotonic()
        launch.command({"command": "step", "ranks": [0], "kind": "over"})
        blocked = launch.event("blocked", 60)
        assert (blocked["rank"], blocked["in"], blocked.get("seq"), blocked.get("group"),
                blocked.get("context")) == (0, "all_reduce", seq, "0",
                                            "DDP bucket, from backward"), blocked
        assert time.monotonic() - asked < 30
        assert launch.job is not None
        entry = _jobs_rank(launch.job, 0)
        assert entry["state"] == "blocked", entry
        assert entry["collective"] == {"name": "all_reduce", "seq": seq, "group": "0"}, entry
        (tmp_path / "go").touch()
        clients[0].request("setBreakpoints", {"source": {"path": USER}, "breakpoints": []})
        launch.command({"command": "continue", "ranks": [1]})
        arrived = launch.event("arrived", 60)
        assert arrived == dict(arrived, command="step", ranks=[0])
        launch.command({"command": "continue"})
        assert launch.exited(120) == 0
    finally:
        for client in clients.values():
            client.close()
        launch.close()

"""A rank blocked in ``work.wait()`` of an async collective (``dist.all_reduce(t,
async_op=True)``) is waiting in that collective: ``runtime.collectives`` reads the call of
``.wait()`` its main thread is in and the ``Work`` it waits on, and names the operation, its
process group and its number (from the Flight Recorder; without it, the operation only).
Pieces first, then real torchrun jobs on gloo: ``rankdebug stacks``, the handler's
``collectives`` answer, and a group step that leaves a rank in ``work.wait()`` (the
``blocked`` event and ``rankdebug jobs --json``)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import threading
import time
import types
from pathlib import Path
from typing import Any

import pytest
from launch_helpers import SCRIPTS, Launch, line_of, tool, wait_for

import wire_check
from dap_client import DAPClient
from rankdebug.runtime import collectives, wire

SCRIPT = "async_wait.py"
WAIT_LINE = line_of(SCRIPT, "# WAIT")


# --- the pieces: which call a blocked frame is in, and what it is called on -------------------

def _blocked_frame(target: Any, *args: Any) -> tuple[types.FrameType, threading.Lock]:
    """``target(*args)`` on a thread of its own, blocked on a held lock (a call into C, as
    ``Work.wait`` is); its innermost frame and the lock (release it to end the thread)."""
    lock = threading.Lock()
    lock.acquire()
    thread = threading.Thread(target=target, args=(lock, *args), daemon=True)
    thread.start()
    for _ in range(200):
        frame = sys._current_frames().get(thread.ident or 0)
        if frame is not None and frame.f_code is target.__code__:
            time.sleep(0.05)  # into the call
            return frame, lock
        time.sleep(0.01)
    raise AssertionError("the thread did not block")


class _Holder:
    def __init__(self, lock: threading.Lock) -> None:
        self.lock = lock


def _on_a_local(lock: threading.Lock) -> None:
    word = "é—é"; lock.acquire()  # noqa: E702 (UTF-8 before the call: columns are bytes)
    del word


def _on_an_attribute(lock: threading.Lock) -> None:
    holder = _Holder(lock)
    holder.lock.acquire(
        True,
    )


def _on_an_item(lock: threading.Lock, i: int) -> None:
    locks = [threading.Lock(), lock]
    locks[i].acquire()


@pytest.mark.parametrize(("target", "args", "receiver"), [
    (_on_a_local, (), "lock"), (_on_an_attribute, (), "holder.lock"),
    (_on_an_item, (1,), "locks[i]")])
def test_the_call_a_blocked_frame_is_in_and_what_it_is_called_on(
        target: Any, args: tuple[Any, ...], receiver: str) -> None:
    frame, lock = _blocked_frame(target, *args)
    try:
        call = collectives._call_at(frame)
        assert call is not None and isinstance(call.func, ast.Attribute)
        assert (call.func.attr, ast.unparse(call.func.value)) == ("acquire", receiver)
        assert collectives._read(call.func.value, frame) is lock
    finally:
        lock.release()


class _Ran(Exception):
    pass


class _WithProperty:
    @property
    def prop(self) -> object:
        raise _Ran("a property ran")


def test_a_receiver_that_would_run_code_is_not_read() -> None:
    items = [object(), object()]
    obj = _WithProperty()

    def make() -> object:
        raise _Ran("a call ran")

    frame = sys._getframe()
    for text in ("make().wait", "obj.prop.wait", "items[len(items) - 1].wait",
                 "items[5].wait", "nowhere.wait"):
        node = ast.parse(text, mode="eval").body
        assert isinstance(node, ast.Attribute)
        assert collectives._read(node.value, frame) is collectives._MISSING, text
    node = ast.parse("items[1].wait", mode="eval").body
    assert isinstance(node, ast.Attribute)
    assert collectives._read(node.value, frame) is items[1]
    assert make is not None and obj is not None  # locals of the frame read above


def test_operation_names_match_the_flight_recorder_s() -> None:
    assert collectives._op_key("gloo:all_reduce") == collectives._op_key("all_reduce")
    assert collectives._op_key("ALLREDUCE") == "allreduce"
    assert collectives._op_key("gloo:all_gather") == collectives._op_key("ALLGATHER")
    assert collectives._op_key("gloo:broadcast") != collectives._op_key("all_reduce")


# --- real jobs --------------------------------------------------------------------------------

def rankdebug(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "rankdebug", *args], capture_output=True,
                          text=True, timeout=60, check=False, cwd=SCRIPTS)
    return wire_check.checked(args, done)  # --json lines as declared


def _armed(tmp: Path, env: dict[str, str] | None = None) -> Launch:
    """An armed 2-rank job of async_wait.py whose rank 1 is late: rank 0 waits for it in the
    ``work.wait()`` of all_reduce #1."""
    return Launch(["--arm", "--", tool("torchrun"), "--standalone", "--nproc_per_node", "2",
                   SCRIPT], tmp, env={"LATE_RANK": "1", **(env or {})})


def _rank0_waiting(job: str) -> dict[str, Any] | None:
    """``rankdebug stacks JOB --json`` once rank 0 is read waiting in a collective in both
    of its reads (the ranks then disagree on group 0)."""
    out = rankdebug("stacks", job, "--json", "--samples", "2")
    report: dict[str, Any] = json.loads(out.stdout) if out.stdout.strip() else {}
    ranks = {r["rank"]: r for r in report.get("ranks", [])}
    waiting = ranks.get(0, {}).get("collective") and report.get("collectives")
    return report if waiting else None


def _end(launch: Launch, tmp: Path) -> None:
    for name in ("go", "done"):
        (tmp / name).touch()
    assert launch.exited(60) == 0


@pytest.mark.timeout(180)
def test_a_rank_in_work_wait_is_in_the_collective_with_its_group_and_number(
        tmp_path: Path) -> None:
    launch = _armed(tmp_path)
    try:
        job = str(launch.event("job")["job"])
        report = wait_for("rank 0 read waiting in work.wait()", lambda: _rank0_waiting(job), 120)
        ranks = {r["rank"]: r for r in report["ranks"]}
        assert ranks[0]["via"] == "handler", ranks[0]
        current = ranks[0]["collectives"]["current"]
        assert current == dict(current, op="all_reduce", group="0", seq=1, desc="default_pg",
                               source="flight recorder", line=WAIT_LINE), current
        assert current["file"].endswith(SCRIPT)
        assert ranks[0]["collective"]["name"] == "all_reduce", ranks[0]["collective"]
        assert ranks[0]["collective"]["line"] == WAIT_LINE
        assert ranks[1]["collective"] is None  # polling for the go file: in no collective
        assert ranks[1]["collectives"]["current"] is None
        row = next(g for g in report["groups"] if g["main"] and 0 in g["ranks"])
        assert row["collective"] == "all_reduce", row
        (found,) = report["collectives"]
        assert found["message"] == ("group 0 (default_pg): rank 1 is in none of its "
                                    "collectives yet; rank 0 at all_reduce #1"), found
        # What the supervisor asks a rank that a group step leaves waiting (jobs --json).
        (listed,) = json.loads(rankdebug("jobs", job, "--json", "--no-gpu").stdout)["jobs"]
        sock = next(r["socket"] for r in listed["ranks"] if r["rank"] == 0)
        asked = wire.ask(sock, {"command": "collectives"}, timeout=5)["collectives"]["current"]
        assert (asked["op"], asked["group"], asked["seq"]) == ("all_reduce", "0", 1), asked
        text = rankdebug("stacks", job).stdout
        assert "[waiting in all_reduce #1]" in text, text
        assert "rank 0 at all_reduce #1" in text, text
        _end(launch, tmp_path)
    finally:
        launch.close()


@pytest.mark.timeout(180)
def test_without_the_flight_recorder_the_work_names_the_operation(tmp_path: Path) -> None:
    launch = _armed(tmp_path, {"TORCH_FR_BUFFER_SIZE": "0"})
    try:
        job = str(launch.event("job")["job"])
        report = wait_for("rank 0 read waiting in work.wait()", lambda: _rank0_waiting(job), 120)
        ranks = {r["rank"]: r for r in report["ranks"]}
        current = ranks[0]["collectives"]["current"]
        # The Work says all_reduce; the job has one group, so it is that one; no number.
        assert current == dict(current, op="all_reduce", group="0", seq=None, source="stack",
                               line=WAIT_LINE), current
        assert ranks[0]["collective"]["name"] == "all_reduce"
        _end(launch, tmp_path)
    finally:
        launch.close()


@pytest.mark.timeout(180)
def test_a_group_step_into_work_wait_reports_the_rank_blocked_in_it(tmp_path: Path) -> None:
    """Ranks 0 and 1 chosen; rank 0 stops at ``work.wait()`` (rank 1, late, is paused
    before its loop) and steps over it alone: it is reported blocked in all_reduce #1 of
    group 0 (the ``blocked`` event, ``rankdebug jobs --json``); rank 1 let go, the step
    arrives."""
    path = str(SCRIPTS / SCRIPT)
    launch = Launch(["--ranks", "all", "--control", "--", tool("torchrun"), "--nproc_per_node",
                     "2", SCRIPT], tmp_path, env={"LATE_RANK": "1"}, stdin=subprocess.PIPE)
    clients: dict[int, DAPClient] = {}
    try:
        clients.update(launch.clients(2))
        clients[0].attach({path: [WAIT_LINE]})
        clients[1].attach({})
        first = launch.event("stopped", 60)
        assert (first["rank"], first["reason"], first["line"]) == (0, "breakpoint", WAIT_LINE)
        while True:  # rank 1 polls for the go file: paused there, for real
            ev = launch.event("stopped", 30)
            if ev["rank"] == 1 and not ev.get("waiting"):
                break
        launch.command({"command": "step", "ranks": [0], "kind": "over"})
        blocked = launch.event("blocked", 30)
        assert blocked["rank"] == 0 and blocked["in"] == "all_reduce", blocked
        assert (blocked.get("seq"), blocked.get("group")) == (1, "0"), blocked
        assert blocked.get("line") == WAIT_LINE, blocked
        assert launch.job is not None
        out = rankdebug("jobs", launch.job, "--json", "--no-gpu")
        (found,) = json.loads(out.stdout)["jobs"]
        entry = next(r for r in found["ranks"] if r["rank"] == 0)
        assert entry["state"] == "blocked", entry
        assert entry["collective"] == {"name": "all_reduce", "seq": 1, "group": "0"}, entry
        (tmp_path / "go").touch()
        launch.command({"command": "continue", "ranks": [1]})
        arrived = launch.event("arrived", 30)
        assert arrived == dict(arrived, command="step", ranks=[0])
        (tmp_path / "done").touch()
        clients[0].request("setBreakpoints", {"source": {"path": path}, "breakpoints": []})
        launch.command({"command": "continue"})
        assert launch.exited(60) == 0
    finally:
        for client in clients.values():
            client.close()
        launch.close()


@pytest.mark.timeout(180)
def test_a_rank_paused_with_its_peer_in_work_wait_is_shown_waiting_in_it(
        tmp_path: Path) -> None:
    """Stop together: rank 1 (late) stops at a breakpoint while rank 0 waits in
    ``work.wait()`` of all_reduce #1; rank 0 is shown paused there, waiting in all_reduce #1
    of group 0 (no collective is on its Python stack: the rank's handler says which)."""
    path = str(SCRIPTS / SCRIPT)
    late = line_of(SCRIPT, "# LATE")
    launch = Launch(["--ranks", "all", "--control", "--", tool("torchrun"), "--nproc_per_node",
                     "2", SCRIPT], tmp_path, env={"LATE_RANK": "1"}, stdin=subprocess.PIPE)
    clients: dict[int, DAPClient] = {}
    try:
        clients.update(launch.clients(2))
        clients[0].attach({})
        clients[1].attach({})
        # Rank 0 waits in its loop's first work.wait() before rank 1 gets its breakpoint.
        wait_for("rank 0 ready", (tmp_path / "ready-0").exists)
        time.sleep(1.0)
        clients[1].request("setBreakpoints", {"source": {"path": path},
                                              "breakpoints": [{"line": late}]})
        stops: dict[int, dict[str, Any]] = {}
        while len(stops) < 2:
            ev = launch.event("stopped", 60)
            stops[int(ev["rank"])] = ev
        assert (stops[1]["reason"], stops[1]["line"]) == ("breakpoint", late), stops
        assert stops[0].get("waiting") == "all_reduce", stops
        assert (stops[0].get("seq"), stops[0].get("group")) == (1, "0"), stops
        assert stops[0].get("line") == WAIT_LINE, stops
        (tmp_path / "go").touch()
        (tmp_path / "done").touch()
        clients[1].request("setBreakpoints", {"source": {"path": path}, "breakpoints": []})
        launch.command({"command": "continue"})
        assert launch.exited(60) == 0
    finally:
        for client in clients.values():
            client.close()
        launch.close()

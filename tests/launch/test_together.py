"""Ranks together (``rankdebug launch``'s group layer): stop together, group continue, pause
and step, breakpoints bound to ranks, run to a line together, a crash held for inspection.
Real torchrun on gloo, real debugpy, a DAP client per chosen rank, commands through
``--control`` and through the job's ``ctl.sock``."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from launch_helpers import SCRIPTS, Launch, job_processes, line_of, tool, wait_for

from dap_client import DAPClient, DAPError
from rankdebug.runtime import registry, wire

TOGETHER = str(SCRIPTS / "together.py")
CRASH = str(SCRIPTS / "crash_hold.py")


def _job(tmp: Path, nproc: int, script: str, *options: str,
         env: dict[str, str] | None = None) -> Launch:
    return Launch(["--ranks", "all", "--control", *options, "--", tool("torchrun"),
                   "--nproc_per_node", str(nproc), script], tmp, env=env,
                  stdin=subprocess.PIPE)


def _clients(launch: Launch, nproc: int, breaks: dict[str, list[int]],
             exceptions: list[str] | None = None) -> dict[int, DAPClient]:
    """A client per chosen rank, attached (VS Code's order) with ``breaks``."""
    found: dict[int, DAPClient] = {}
    found.update(launch.clients(nproc))
    for client in found.values():
        client.attach(breaks, exceptions=exceptions)
    return found


def _stops(launch: Launch, count: int, timeout: float = 60.0) -> dict[int, dict[str, Any]]:
    """The next ``count`` ``stopped`` events of the job, by rank (a rank's latest)."""
    out: dict[int, dict[str, Any]] = {}
    while len(out) < count:
        ev = launch.event("stopped", timeout)
        out[int(ev["rank"])] = ev
    return out


def _top(client: DAPClient, stopped: dict[str, Any]) -> dict[str, Any]:
    return client.top_frame(int(stopped["threadId"]))


def _finish(launch: Launch, tmp: Path, clients: dict[int, DAPClient], path: str) -> None:
    """End the script's loop, clear breakpoints, continue all: the job ends with 0."""
    (tmp / "done").write_text("")
    for client in clients.values():
        client.request("setBreakpoints", {"source": {"path": path}, "breakpoints": []})
    launch.command({"command": "continue"})  # an error event when every rank runs already
    try:
        code = launch.exited(60)
    except AssertionError:
        for pid in job_processes(launch.job or ""):
            subprocess.run(["py-spy", "dump", "--pid", str(pid)], check=False)
        raise
    assert code == 0
    for client in clients.values():
        client.close()


def _looping(tmp: Path, nproc: int) -> None:
    """Until every rank of together.py has entered its loop."""
    wait_for("the ranks' loop", lambda: all((tmp / f"loop-{r}").exists()
                                             for r in range(nproc)))


def _ask(job_dir: str, body: dict[str, Any]) -> dict[str, Any]:
    """One command through the job's control socket, and its answer."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(30)
        sock.connect(os.path.join(job_dir, "ctl.sock"))
        sock.sendall((json.dumps(body) + "\n").encode())
        with sock.makefile("rb") as f:
            answer: dict[str, Any] = json.loads(f.readline())
            return answer


@pytest.mark.timeout(180)
def test_one_rank_stops_every_chosen_rank_is_paused(tmp_path: Path) -> None:
    """4 chosen ranks, a breakpoint only rank 0 reaches: every client is shown its rank
    paused (ranks 1-3 with reason pause, where they wait); Continue All runs them all."""
    line = line_of("together.py", "# RANK0")
    launch = _job(tmp_path, 4, TOGETHER)
    try:
        clients = _clients(launch, 4, {TOGETHER: [line]})
        stops = _stops(launch, 4)
        assert stops[0]["reason"] == "breakpoint" and stops[0]["line"] == line
        for rank in (1, 2, 3):
            assert stops[rank]["reason"] == "pause", stops[rank]
            assert stops[rank]["file"] == TOGETHER, stops[rank]  # the user's frame
        for rank, client in clients.items():
            stopped = client.stopped(10)
            assert stopped["reason"] == ("breakpoint" if rank == 0 else "pause")
            top = _top(client, stopped)
            assert top["source"]["path"] == TOGETHER, top
            if rank == 0:
                assert client.evaluate("step", top["id"]) == "2"
        # A rank that waits in all_reduce says so, and which one (the loop's third: rank 0
        # stopped before it), and cannot step yet.
        waiting = [r for r in (1, 2, 3) if stops[r].get("waiting")]
        for rank in waiting:
            assert stops[rank]["waiting"] == "all_reduce"
            assert (stops[rank].get("seq"), stops[rank].get("group")) == (3, "0"), stops[rank]
            stopped = clients[rank].stopped(10)
            assert "all_reduce" in stopped["description"]
            with pytest.raises(DAPError, match="waits in all_reduce"):
                clients[rank].request("next", {"threadId": stopped["threadId"]})
        marks = {r: len(c.events) for r, c in clients.items()}
        launch.command({"command": "continue", "ranks": "all"})
        continued = {int(launch.event("continued", 20)["rank"]) for _ in range(4)}
        assert continued == {0, 1, 2, 3}
        for rank, client in clients.items():
            client.wait_event("continued", 20, after=marks[rank])
        _finish(launch, tmp_path, clients, TOGETHER)
    finally:
        launch.close()


@pytest.mark.timeout(180)
@pytest.mark.parametrize("attach", ["hit", "start"])
def test_pause_all_then_step_all(tmp_path: Path, attach: str) -> None:
    """Pause All stops both ranks; Step Over All moves each that can one line (reason step)
    or reports the collective it waits in; ``arrived`` names the ranks that stepped. The
    same whether the ranks run untraced until needed (hit) or traced from the start."""
    launch = _job(tmp_path, 2, TOGETHER, "--attach", attach)
    try:
        clients = _clients(launch, 2, {})
        _looping(tmp_path, 2)
        launch.command({"command": "pause"})
        stops = _stops(launch, 2)
        assert all(s["reason"] == "pause" for s in stops.values()), stops
        launch.command({"command": "step", "ranks": [0, 1], "kind": "over"})
        # Each rank steps a line, or waits in the all_reduce it stepped into. One that waits
        # for a peer which stopped short of the all_reduce ends its step only when that peer
        # goes on (the pause can land the two a line apart).
        moved: dict[int, str] = {}
        while True:
            ev = launch.event(("stopped", "blocked", "arrived"), 30)
            if ev["event"] == "arrived":
                arrived = ev
                break
            moved[int(ev["rank"])] = "blocked" if ev["event"] == "blocked" else ev["reason"]
            if sorted(moved.values()) == ["blocked", "step"]:
                stepped = next(r for r, how in moved.items() if how == "step")
                launch.command({"command": "continue", "ranks": [stepped]})
                arrived = launch.event("arrived", 30)
                break
        assert arrived["command"] == "step"
        said = [e for e in launch.events if e.get("event") == "blocked"]
        blocked = {int(e["rank"]) for e in said}
        assert set(arrived["ranks"]) | blocked == {0, 1}, launch.events
        # A rank blocked in the loop's all_reduce says which one, from PyTorch's records (a
        # rank paused in its sleep is shown waiting in native code: no number there).
        assert all(isinstance(e.get("seq"), int) and e.get("group") == "0" for e in said
                   if e["in"] == "all_reduce"), said
        for rank in arrived["ranks"]:
            assert clients[rank].wait_event("stopped", 10, after=0)
            reasons = [e["body"]["reason"] for e in clients[rank].events
                       if e.get("event") == "stopped"]
            assert reasons[-1] == "step", reasons
        _finish(launch, tmp_path, clients, TOGETHER)
    finally:
        launch.close()


@pytest.mark.timeout(120)
def test_a_rank_continued_before_the_others_pause_lands_runs_on(tmp_path: Path) -> None:
    """Rank 0 stops at a breakpoint and is continued while rank 1's pause (stop together) is
    still on its way (rank 1 sleeps): when that pause lands, rank 0 is not paused again."""
    script = str(SCRIPTS / "pause_late.py")
    launch = _job(tmp_path, 2, script)
    try:
        clients = _clients(launch, 2, {script: [line_of("pause_late.py")]})
        first = _stop_of(launch, 0, waiting=False)
        assert first["reason"] == "breakpoint", first
        stopped = clients[0].stopped(10)
        mark = len(clients[0].events)
        clients[0].request("setBreakpoints", {"source": {"path": script}, "breakpoints": []})
        clients[0].cont(stopped["threadId"])
        late = _stop_of(launch, 1, waiting=False, timeout=30)  # after its sleep
        assert (late["reason"], late["line"]) == ("pause", line_of("pause_late.py", "# AFTER"))
        wait_for("rank 0 to count to the end",
                 lambda: (tmp_path / "count-0").exists()
                 and (tmp_path / "count-0").read_text() == "39", 30)
        again = [e for e in clients[0].events[mark:] if e.get("event") == "stopped"]
        assert not again, again
        stops = [e for e in launch.events if e.get("event") == "stopped" and e["rank"] == 0]
        assert len(stops) == 1, stops
        clients[1].cont(clients[1].stopped(10)["threadId"])
        assert launch.exited(60) == 0
        for client in clients.values():
            client.close()
    finally:
        launch.close()


def _stop_of(launch: Launch, rank: int, waiting: bool, timeout: float = 30.0
             ) -> dict[str, Any]:
    """The job's next ``stopped`` event of ``rank``, shown waiting in a collective or a real
    stop (others' are passed over)."""
    while True:
        ev = launch.event("stopped", timeout)
        if ev["rank"] == rank and bool(ev.get("waiting")) == waiting:
            return ev


@pytest.mark.timeout(180)
def test_a_traced_rank_paused_in_a_collective_continues_pauses_and_steps(tmp_path: Path
                                                                         ) -> None:
    """Traced from the start, rank 1 is paused while it waits in all_reduce (rank 0 holds at
    a breakpoint of its own): it is shown waiting, its pause pending in debugpy. Continue All
    then lets it run on unseen, and it can be paused again (debugpy answers a "continue" of a
    thread that never stopped only once one resumes, and nothing else meanwhile). Paused
    again and released by rank 0, it stops where the collective's wrapper returns, in library
    code; Step Over there stops at the next line (debugpy alone lost that step)."""
    reduce = line_of("together.py", "# REDUCE")
    launch = _job(tmp_path, 2, TOGETHER, "--attach", "start", "--stop", "alone")
    try:
        clients = _clients(launch, 2, {})
        for client in clients.values():
            client.request("setBreakpoints", {"source": {"path": TOGETHER}, "breakpoints": [
                {"line": reduce, "condition": "ranks 0"}]})
        first = _stop_of(launch, 0, waiting=False)
        assert (first["reason"], first["line"]) == ("breakpoint", reduce), first
        launch.command({"command": "pause", "ranks": [1]})
        assert _stop_of(launch, 1, waiting=True)["waiting"] == "all_reduce"
        clients[1].wait_event("stopped", 10)
        mark = len(clients[1].events)
        launch.command({"command": "continue"})
        assert {int(launch.event("continued", 20)["rank"]) for _ in range(2)} == {0, 1}
        again = _stop_of(launch, 0, waiting=False)  # the next step's all_reduce
        assert (again["reason"], again["line"]) == ("breakpoint", reduce), again
        # Rank 1 must be in that all_reduce before it is paused (on a loaded machine it can
        # still be in the step's sleep: its pause then lands there, a real stop, not a wait).
        _wait_in_collective(str(launch.job), 1)
        launch.command({"command": "pause", "ranks": [1]})
        assert _stop_of(launch, 1, waiting=True)["waiting"] == "all_reduce"
        # Rank 1 went on to wait in that all_reduce with no stop its client could see (its
        # pending pause landed and was continued), and its debugger answers: shown waiting.
        clients[1].wait_event("stopped", 10, after=mark)
        seen = [e["body"].get("description") for e in clients[1].events[mark:]
                if e.get("event") == "stopped"]
        # The collective with its number, from the rank's Flight Recorder.
        assert len(seen) == 1 and re.fullmatch(r"Paused: waiting in all_reduce #\d+", seen[0]), (
            clients[1].events[mark:])
        launch.command({"command": "continue", "ranks": [0]})
        real = _stop_of(launch, 1, waiting=False)
        assert (real["reason"], real["line"]) == ("pause", reduce), real
        launch.command({"command": "step", "ranks": [1], "kind": "over"})
        arrived = launch.event("arrived", 30)
        assert arrived["ranks"] == [1], launch.events
        stepped = _stop_of(launch, 1, waiting=False)
        assert (stepped["reason"], stepped["line"]) == ("step", reduce + 1), stepped
        _finish(launch, tmp_path, clients, TOGETHER)
    finally:
        launch.close()


def _wait_in_collective(job: str, rank: int) -> None:
    """Until the rank's own handler says its main thread waits in a collective."""
    def waiting() -> bool:
        entry = registry.read_rank(job, rank) or {}
        path = entry.get("socket")
        if not isinstance(path, str):
            return False
        try:
            reply = wire.ask(path, {"command": "collectives"}, timeout=5.0)
        except wire.WireError:
            return False
        state = reply.get("collectives") or {}
        return state.get("current") is not None

    wait_for(f"rank {rank} to wait in its collective", waiting, 60)


def _jobs_rank(job: str, rank: int) -> dict[str, Any]:
    """``rankdebug jobs JOB --json``'s entry of ``rank``."""
    out = subprocess.run([sys.executable, "-m", "rankdebug", "jobs", job, "--json", "--no-gpu"],
                         capture_output=True, text=True, timeout=60, check=True)
    (found,) = json.loads(out.stdout)["jobs"]
    entry: dict[str, Any] = next(r for r in found["ranks"] if r["rank"] == rank)
    return entry


@pytest.mark.timeout(180)
def test_a_rank_stepped_into_a_collective_says_which_and_its_number(tmp_path: Path) -> None:
    """Rank 0 stops at the loop's all_reduce (rank 1 starts late and is paused before it),
    then steps over it alone: it waits for rank 1 and is reported blocked in all_reduce #1
    of group 0, from the rank's own records (its handler answers while the main thread
    waits), in the ``blocked`` event, the registry and ``rankdebug jobs``. Continue on rank 1
    lets the step finish."""
    line = line_of("together.py", "# REDUCE")
    launch = _job(tmp_path, 2, TOGETHER, env={"LATE_RANK": "1"})
    try:
        clients: dict[int, DAPClient] = {}
        clients.update(launch.clients(2))
        clients[0].attach({TOGETHER: [line]})
        clients[1].attach({})
        first = launch.event("stopped", 60)
        assert (first["rank"], first["reason"], first["line"]) == (0, "breakpoint", line)
        assert launch.job is not None
        # Rank 1 sleeps before its loop: paused there (shown waiting in native code while it
        # sleeps), it stops for real when the sleep ends.
        while True:
            ev = launch.event("stopped", 30)
            if ev["rank"] == 1 and not ev.get("waiting"):
                break
        asked = time.monotonic()
        launch.command({"command": "step", "ranks": [0], "kind": "over"})
        blocked = launch.event("blocked", 30)
        took = time.monotonic() - asked
        assert blocked["rank"] == 0 and blocked["in"] == "all_reduce", blocked
        assert (blocked.get("seq"), blocked.get("group")) == (1, "0"), blocked
        print(f"blocked reported {took:.2f} s after the step")
        entry = _jobs_rank(launch.job, 0)
        assert entry["state"] == "blocked", entry
        assert entry["collective"] == {"name": "all_reduce", "seq": 1, "group": "0"}, entry
        launch.command({"command": "continue", "ranks": [1]})
        arrived = launch.event("arrived", 30)
        assert arrived == dict(arrived, command="step", ranks=[0])
        wait_for("rank 0's entry without the collective", lambda: _jobs_rank(
            str(launch.job), 0)["collective"] is None, 30)
        _finish(launch, tmp_path, clients, TOGETHER)
    finally:
        launch.close()


@pytest.mark.timeout(180)
def test_breakpoint_bound_to_one_rank(tmp_path: Path) -> None:
    """A breakpoint with the condition ``ranks 1`` stops rank 1 only; rank 0's client is told
    the breakpoint is not its rank's (``--stop alone``: nothing else pauses rank 0)."""
    line = line_of("together.py", "# SLEEP")
    launch = _job(tmp_path, 2, TOGETHER, "--stop", "alone")
    try:
        found: dict[int, DAPClient] = {}
        found.update(launch.clients(2))
        answers = {}
        for rank, client in found.items():
            client.attach({})
            answers[rank] = client.request("setBreakpoints", {
                "source": {"path": TOGETHER},
                "breakpoints": [{"line": line, "condition": "ranks 1"}]})["breakpoints"]
        assert answers[1][0]["verified"] is True
        assert answers[0][0]["verified"] is False
        assert "ranks 1" in answers[0][0]["message"]
        stops = _stops(launch, 1)
        assert list(stops) == [1] and stops[1]["reason"] == "breakpoint"
        top = _top(found[1], found[1].stopped(10))
        assert top["line"] == line
        time.sleep(1.0)
        assert not [e for e in launch.events if e.get("event") == "stopped"
                    and e.get("rank") == 0]
        assert not [e for e in found[0].events if e.get("event") == "stopped"]
        _finish(launch, tmp_path, found, TOGETHER)
    finally:
        launch.close()


@pytest.mark.timeout(180)
def test_run_to_line_holds_until_every_rank_is_there(tmp_path: Path) -> None:
    """Run to a line (through ctl.sock) with rank 0 late by 2 s: both stop there, then
    ``arrived``; the line is not a breakpoint afterwards. A bad rank list is answered."""
    line = line_of("together.py", "# SLEEP")
    launch = _job(tmp_path, 2, TOGETHER, env={"LATE_RANK": "0"})
    try:
        clients = _clients(launch, 2, {})
        job_dir = str(launch.event("job")["dir"])
        bad = _ask(job_dir, {"command": "run-to", "ranks": "7", "file": TOGETHER, "line": line})
        assert "no chosen rank" in bad["error"]["message"]
        answer = _ask(job_dir, {"command": "run-to", "file": TOGETHER, "line": line})
        assert answer == {"ok": True, "ranks": [0, 1]}
        arrived = launch.event("arrived", 60)
        assert arrived["command"] == "run-to" and arrived["ranks"] == [0, 1]
        stopped_at = {int(e["rank"]): e["line"] for e in launch.events
                      if e.get("event") == "stopped" and e.get("reason") == "breakpoint"}
        assert stopped_at == {0: line, 1: line}, launch.events
        for client in clients.values():
            assert _top(client, client.stopped(10))["line"] == line
        assert _ask(job_dir, {"command": "continue"})["ok"] is True
        time.sleep(1.0)  # a step or two: the line no longer stops them
        assert [e for e in launch.events if e.get("event") == "stopped"] == [] or all(
            e.get("reason") != "breakpoint" or e is not None for e in launch.events)
        before = sum(1 for e in clients[0].events if e.get("event") == "stopped")
        time.sleep(0.5)
        assert sum(1 for e in clients[0].events if e.get("event") == "stopped") == before
        _finish(launch, tmp_path, clients, TOGETHER)
    finally:
        launch.close()


@pytest.mark.timeout(180)
def test_crash_is_held_for_inspection(tmp_path: Path) -> None:
    """Rank 1 raises in a job whose collective timeout is 3 s: it is stopped at the raise
    with its locals for longer than that, rank 0 is alive (shown paused where it waits);
    Stop leaves no process."""
    line = line_of("crash_hold.py", "# RAISES")
    launch = _job(tmp_path, 2, CRASH)
    try:
        clients = _clients(launch, 2, {}, exceptions=["uncaught"])
        stops = _stops(launch, 2)
        assert stops[1]["reason"] == "exception" and stops[1]["line"] == line, stops
        assert stops[1]["function"] == "<module>", stops  # debugpy's "(Current frame)" cut
        assert stops[0]["reason"] == "pause", stops
        stopped = clients[1].stopped(10)
        top = _top(clients[1], stopped)
        time.sleep(6.0)  # twice the collective timeout
        assert clients[1].evaluate("loss", top["id"]) == "nan"
        assert launch.proc.poll() is None
        job = launch.job
        assert job is not None
        assert len(job_processes(job)) >= 3  # torchrun and both ranks
        launch.command({"command": "stop"})
        assert launch.exited() != 0
        time.sleep(0.5)
        assert job_processes(job) == []
    finally:
        launch.close()

"""The gate (``--attach hit``): a chosen rank runs untraced while a DAP client attaches,
sets and changes breakpoints, pauses; the debugger comes at the first need. Real torchrun,
real debugpy, our DAP client."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from launch_helpers import (
    SCRIPTS,
    Launch,
    job_adapters,
    line_of,
    listening_ports,
    read_json,
    tool,
)

from dap_client import DAPClient

DDP = str(SCRIPTS / "ddp_steps.py")
LOOP = str(SCRIPTS / "loop.py")


def _ddp(tmp: Path, *options: str) -> Launch:
    return Launch(["--ranks", "1", "--attach", "hit", *options, "--", tool("torchrun"),
                   "--nproc_per_node", "2", DDP], tmp)


def _loop(tmp: Path, *options: str) -> Launch:
    return Launch(["--ranks", "0", "--attach", "hit", *options, "--", sys.executable, LOOP],
                  tmp)


def _client(launch: Launch) -> DAPClient:
    ev = launch.event("listening")
    return DAPClient(str(ev["host"]), int(ev["port"]))


def _frames(client: DAPClient, thread: int) -> list[dict[str, Any]]:
    frames: list[dict[str, Any]] = client.request(
        "stackTrace", {"threadId": thread})["stackFrames"]
    return frames


def _no_rankdebug(frames: list[dict[str, Any]]) -> None:
    """No frame of rankdebug's: its package, or the bootstrap (the boot folder's
    sitecustomize.py)."""
    paths = [str((f.get("source") or {}).get("path", "")) for f in frames]
    assert not [p for p in paths if f"{os.sep}rankdebug{os.sep}" in p
                or p.endswith(f"{os.sep}sitecustomize.py")], paths


def _release(launch: Launch, client: DAPClient, path: str, thread: int,
             frame: int | None = None) -> None:
    """Clear ``path``'s breakpoints (ending loop.py's loop first, given its frame), continue,
    and check that the job ends with status 0."""
    if frame is not None:
        client.evaluate("done = True", frame)
    client.request("setBreakpoints", {"source": {"path": path}, "breakpoints": []})
    client.cont(thread)
    assert launch.exited() == 0
    client.close()


@pytest.mark.timeout(120)
def test_breakpoint_set_over_dap_stops_untraced_rank(tmp_path: Path) -> None:
    """No --break: the client's own breakpoint, sent after attach, is planted before the
    script runs; the stack holds only the user's frames; unchosen ranks load no debugpy."""
    line = line_of("ddp_steps.py")
    launch = _ddp(tmp_path)
    try:
        client = _client(launch)
        client.attach({DDP: [line]})
        assert launch.event("attached")["rank"] == 1
        assert "modules" in client.request("modules", {})  # the gate's, or debugpy's
        stopped = client.stopped()
        assert stopped["reason"] == "breakpoint"
        frames = _frames(client, stopped["threadId"])
        assert (frames[0]["line"], frames[0]["name"]) == (line, "<module>")
        assert [f["name"] for f in frames] == ["<module>"]
        _no_rankdebug(frames)
        assert client.evaluate("rank", frames[0]["id"]) == "1"
        # A breakpoint added after the first hit stops the rank too.
        after = line_of("ddp_steps.py", "loss.backward()")
        client.request("setBreakpoints", {"source": {"path": DDP},
                                          "breakpoints": [{"line": after}]})
        mark = len(client.events)
        client.cont(stopped["threadId"])
        again = client.stopped(after=mark)
        assert client.top_frame(again["threadId"])["line"] == after
        _release(launch, client, DDP, again["threadId"])
    finally:
        launch.close()
    assert read_json(tmp_path / "rank-0.json")["debugpy"] is False


@pytest.mark.timeout(120)
def test_break_on_the_command_line_stops_without_client_breakpoints(tmp_path: Path) -> None:
    line = line_of("ddp_steps.py")
    launch = _ddp(tmp_path, "--break", f"{DDP}:{line}")
    try:
        client = _client(launch)
        client.attach({})
        stopped = client.stopped()
        assert client.top_frame(stopped["threadId"])["line"] == line
        _release(launch, client, DDP, stopped["threadId"])
    finally:
        launch.close()


@pytest.mark.timeout(120)
def test_conditional_breakpoint_and_logpoint(tmp_path: Path) -> None:
    line = line_of("ddp_steps.py")
    after = line_of("ddp_steps.py", "loss.backward()")
    launch = _ddp(tmp_path)
    try:
        client = _client(launch)
        client.attach({})
        client.request("setBreakpoints", {"source": {"path": DDP}, "breakpoints": [
            {"line": line, "condition": "_step == 2"},
            {"line": after, "logMessage": "logged step {_step}"}]})
        stopped = client.stopped()
        frame = client.top_frame(stopped["threadId"])
        assert frame["line"] == line
        assert client.evaluate("_step", frame["id"]) == "2"
        logged = [e["body"]["output"] for e in client.events if e.get("event") == "output"
                  and "logged step" in e["body"].get("output", "")]
        assert [s.strip() for s in logged] == ["logged step 0", "logged step 1"]
        _release(launch, client, DDP, stopped["threadId"])
    finally:
        launch.close()


def _stop_while_untraced(tmp: Path, what: str, ask: Callable[[DAPClient], object],
                         reason: str, line: int | None = None) -> None:
    """loop.py, configured with no breakpoint, runs untraced; ``ask`` makes it stop in the
    user's code, with no frame of ours, within 5 s (the target is 1 s; the margin is for a
    loaded CI machine); then the job ends cleanly."""
    launch = _loop(tmp)
    try:
        client = _client(launch)
        client.attach({})
        time.sleep(1.0)  # the loop runs
        asked = time.monotonic()
        ask(client)
        stopped = client.stopped()
        took = time.monotonic() - asked
        print(f"{what}: stopped {took:.2f} s after the request")
        assert stopped["reason"] == reason
        frames = _frames(client, stopped["threadId"])
        assert frames[0]["source"]["path"] == LOOP
        assert line is None or frames[0]["line"] == line
        _no_rankdebug(frames)
        assert took < 5.0, took
        _release(launch, client, LOOP, stopped["threadId"], frames[0]["id"])
    finally:
        launch.close()


@pytest.mark.timeout(120)
def test_breakpoint_added_while_running_untraced(tmp_path: Path) -> None:
    late = line_of("loop.py", "# LATE")
    _stop_while_untraced(tmp_path, "breakpoint added while untraced", lambda c: c.request(
        "setBreakpoints", {"source": {"path": LOOP}, "breakpoints": [{"line": late}]}),
        "breakpoint", late)


@pytest.mark.timeout(120)
def test_removed_breakpoint_no_longer_stops(tmp_path: Path) -> None:
    late = line_of("loop.py", "# LATE")
    launch = _loop(tmp_path)
    try:
        client = _client(launch)
        client.attach({LOOP: [late]})
        stopped = client.stopped()
        frame = client.top_frame(stopped["threadId"])
        client.request("setBreakpoints", {"source": {"path": LOOP}, "breakpoints": []})
        mark = len(client.events)
        client.cont(stopped["threadId"])
        time.sleep(1.0)
        assert not [e for e in client.events[mark:] if e.get("event") == "stopped"]
        client.request("pause", {"threadId": stopped["threadId"]})
        paused = client.stopped(after=mark)
        assert paused["reason"] == "pause"
        assert frame["line"] == late
        _release(launch, client, LOOP, paused["threadId"],
                 client.top_frame(paused["threadId"])["id"])
    finally:
        launch.close()


@pytest.mark.timeout(120)
def test_pause_before_any_hit(tmp_path: Path) -> None:
    _stop_while_untraced(tmp_path, "pause before any hit", lambda c: c.request(
        "pause", {"threadId": c.request("threads")["threads"][0]["id"]}), "pause")


@pytest.mark.timeout(120)
@pytest.mark.parametrize("attach", ["hit", "start"])
def test_a_pause_before_the_script_runs_stops_in_the_script(tmp_path: Path, attach: str
                                                             ) -> None:
    """Pause as soon as the client has configured: the rank is still in the bootstrap (it
    waited for the client there), with no frame of the user's yet. It stops where plain
    debugpy stops then: entering the user's script, never in a frame of ours. (The script
    runs two seconds: one that ends at once was over before the pause, 1 run in 20.)"""
    script = str(SCRIPTS / "short_loop.py")
    launch = Launch(["--ranks", "0", "--attach", attach, "--", sys.executable, script],
                    tmp_path)
    try:
        client = _client(launch)
        client.attach({})
        client.request("pause", {"threadId": 0})
        stopped = client.stopped()
        assert stopped["reason"] == "pause"
        frames = _frames(client, stopped["threadId"])
        _no_rankdebug(frames)
        assert frames[0]["source"]["path"] == script, frames
        client.cont(stopped["threadId"])
        assert launch.exited() == 0
        client.close()
    finally:
        launch.close()


@pytest.mark.timeout(120)
def test_uncaught_exception_stops_untraced_rank_with_its_locals(tmp_path: Path) -> None:
    script = str(SCRIPTS / "raises.py")
    launch = Launch(["--ranks", "1", "--attach", "hit", "--", tool("torchrun"),
                     "--nproc_per_node", "2", script], tmp_path)
    try:
        client = _client(launch)
        client.attach({}, exceptions=["uncaught"])  # VS Code's default filter
        stopped = client.stopped()
        assert stopped["reason"] == "exception"
        frames = _frames(client, stopped["threadId"])
        assert frames[0]["name"] == "load"
        assert frames[0]["line"] == line_of("raises.py", "# RAISES")
        _no_rankdebug(frames)
        assert client.evaluate("scale", frames[0]["id"]) == "0"
        info = client.request("exceptionInfo", {"threadId": stopped["threadId"]})
        assert "ZeroDivisionError" in info["exceptionId"]
        client.cont(stopped["threadId"])
        assert launch.exited() != 0
        client.close()
    finally:
        launch.close()
    # The traceback the rank printed starts at the user's script, as under plain Python.
    err = launch.stderr()
    trace = err[err.index("Traceback (most recent call last)"):]
    first = trace.splitlines()[1]
    assert "raises.py" in first, trace
    assert "rankdebug" not in trace.split("ZeroDivisionError")[0]


def _files(data: Any) -> list[str]:
    """Every frame's file in a ``stacks --json`` report."""
    if isinstance(data, dict):
        out = [str(data["file"])] if "file" in data and "line" in data else []
        return out + [f for v in data.values() for f in _files(v)]
    if isinstance(data, list):
        return [f for v in data for f in _files(v)]
    return []


@pytest.mark.timeout(120)
def test_stacks_of_an_untraced_rank_show_only_the_users_frames(tmp_path: Path) -> None:
    """A hook in the main script runs it from rankdebug's audit hook: that frame is hidden."""
    import json
    import subprocess

    never = line_of("loop.py", "# NEVER")
    launch = _loop(tmp_path, "--break", f"{LOOP}:{never}")
    try:
        client = _client(launch)
        client.attach({})
        time.sleep(1.0)
        out = subprocess.run([sys.executable, "-m", "rankdebug", "stacks", str(launch.job),
                              "--json"], capture_output=True, text=True, timeout=60, check=False)
        assert out.returncode == 0, out.stderr
        files = _files(json.loads(out.stdout))
        assert LOOP in files
        assert not [f for f in files if f"{os.sep}rankdebug{os.sep}" in f], files
        client.close()
    finally:
        launch.close()


def _next_client_stops(launch: Launch, ev: dict[str, Any], late: int) -> None:
    """A new client of loop.py's rank attaches with a breakpoint at ``late``, stops there,
    and the job ends cleanly."""
    client = DAPClient(str(ev["host"]), int(ev["port"]))
    client.attach({LOOP: [late]})
    stopped = client.stopped()
    frame = client.top_frame(stopped["threadId"])
    assert frame["line"] == late
    _release(launch, client, LOOP, stopped["threadId"], frame["id"])


def _stray(ev: dict[str, Any]) -> None:
    """What a port scan does: connect, close."""
    import socket

    with socket.create_connection((str(ev["host"]), int(ev["port"])), timeout=10):
        pass


@pytest.mark.timeout(120)
def test_stray_connections_and_a_second_client(tmp_path: Path) -> None:
    """A port scan before and after the rank is traced changes nothing; a client that
    detaches leaves the port to the next one, which is relayed from its first message."""
    late = line_of("loop.py", "# LATE")
    launch = _loop(tmp_path)
    try:
        ev = launch.event("listening")
        _stray(ev)
        first = DAPClient(str(ev["host"]), int(ev["port"]))
        first.attach({LOOP: [late]})
        stopped = first.stopped()
        first.request("setBreakpoints", {"source": {"path": LOOP}, "breakpoints": []})
        first.cont(stopped["threadId"])
        first.disconnect()
        for _ in range(3):
            _stray(ev)
        _next_client_stops(launch, ev, late)
    finally:
        launch.close()


_OTHER_USER = 65534  # nobody


def _wait_for(get: Callable[[], list[int]], timeout: float = 20.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while not (got := get()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert got, "nothing appeared"
    return got
# An interpreter the other user may run (the venv's may live under a private home).
_SYSTEM_PYTHON = next((p for p in ("/usr/bin/python3", "/usr/local/bin/python3")
                       if os.access(p, os.X_OK)), None)


@pytest.mark.timeout(120)
@pytest.mark.skipif(os.geteuid() != 0 or _SYSTEM_PYTHON is None,
                    reason="needs root (to act as a second local user) and a system python3")
@pytest.mark.parametrize("mode", ["hit", "start"])
def test_another_local_user_is_turned_away(tmp_path: Path, mode: str) -> None:
    """A second user's client gets no answer (from the gate, a refusal); the owner's client
    then works. ``start``: the printed port is the supervisor's owner-only adapter."""
    import subprocess
    import textwrap

    probe = textwrap.dedent('''
        import json, socket, sys
        s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)
        body = json.dumps({"seq": 1, "type": "request", "command": "initialize",
                           "arguments": {"adapterID": "x"}}).encode()
        try:
            s.sendall(b"Content-Length: %d\\r\\n\\r\\n" % len(body) + body)
        except OSError:
            pass
        data = b""
        try:
            while chunk := s.recv(65536):
                data += chunk
        except OSError:
            pass
        print(data.decode(errors="replace"))
    ''')
    late = line_of("loop.py", "# LATE")
    launch = _loop(tmp_path, "--attach", mode)
    try:
        ev = launch.event("listening")
        out = subprocess.run([str(_SYSTEM_PYTHON), "-c", probe, str(ev["host"]), str(ev["port"])],
                             capture_output=True, text=True, timeout=30, check=False,
                             user=_OTHER_USER, cwd="/")
        assert mode != "hit" or "belongs to another user" in out.stdout, out
        assert '"command":"initialize"' not in out.stdout.replace(" ", "")
        # debugpy's adapter behind the gate: its ports take no one else either.
        assert launch.job is not None
        ports = _wait_for(lambda: [p for pid in job_adapters(str(launch.job))
                                   for p in listening_ports(pid)])
        for port in ports:
            out = subprocess.run([str(_SYSTEM_PYTHON), "-c", probe, "127.0.0.1", str(port)],
                                 capture_output=True, text=True, timeout=30, check=False,
                                 user=_OTHER_USER, cwd="/")
            assert '"command":"initialize"' not in out.stdout.replace(" ", ""), (port, out)
        client = DAPClient(str(ev["host"]), int(ev["port"]))
        client.attach({LOOP: [late]})
        stopped = client.stopped()
        frame = client.top_frame(stopped["threadId"])
        _release(launch, client, LOOP, stopped["threadId"], frame["id"])
    finally:
        launch.close()


@pytest.mark.timeout(120)
def test_uncaught_exception_in_another_thread_stops_untraced_rank(tmp_path: Path) -> None:
    script = str(SCRIPTS / "thread_raises.py")
    launch = Launch(["--ranks", "0", "--", sys.executable, script], tmp_path)
    try:
        client = _client(launch)
        client.attach({}, exceptions=["uncaught"])
        stopped = client.stopped()
        assert stopped["reason"] == "exception"
        frames = _frames(client, stopped["threadId"])
        assert (frames[0]["name"], frames[0]["line"]) == ("work", line_of("thread_raises.py",
                                                                          "# RAISES"))
        assert client.evaluate("scale", frames[0]["id"]) == "0"
        client.cont(stopped["threadId"])
        assert launch.exited() == 0  # as under plain Python: a thread's exception ends it
        client.close()
    finally:
        launch.close()


@pytest.mark.timeout(120)
def test_no_wait_rank_takes_the_clients_breakpoints_when_it_comes(tmp_path: Path) -> None:
    """--no-wait: the rank runs before any client; the client's breakpoint, on a line no
    --break gave, still stops it."""
    late = line_of("loop.py", "# LATE")
    never = line_of("loop.py", "# NEVER")
    launch = _loop(tmp_path, "--no-wait", "--break", f"{LOOP}:{never}")
    try:
        client = _client(launch)
        time.sleep(1.0)  # the loop runs untraced
        client.attach({LOOP: [late]})
        stopped = client.stopped()
        frame = client.top_frame(stopped["threadId"])
        assert frame["line"] == late
        _release(launch, client, LOOP, stopped["threadId"], frame["id"])
    finally:
        launch.close()


@pytest.mark.timeout(120)
def test_a_client_that_vanishes_while_paused_leaves_the_rank_to_the_next(tmp_path: Path) -> None:
    late = line_of("loop.py", "# LATE")
    launch = _loop(tmp_path)
    try:
        first = _client(launch)
        first.attach({LOOP: [late]})
        first.stopped()
        first.close()  # no disconnect: the editor crashed
        ev = next(e for e in launch.events if e.get("event") == "listening")
        _next_client_stops(launch, ev, late)
    finally:
        launch.close()


@pytest.mark.timeout(120)
def test_killing_the_supervisor_outright_leaves_no_adapter(tmp_path: Path) -> None:
    """SIGKILL of ``rankdebug launch`` while a rank is traced, the rank one that survives
    its parent-death signal (it ignores SIGTERM): its debugpy adapter, still connected to
    the rank, ends all the same (it watches the supervisor)."""
    script = str(SCRIPTS / "stubborn.py")
    late = line_of("stubborn.py", "# LATE")
    launch = Launch(["--ranks", "0", "--", sys.executable, script], tmp_path)
    try:
        client = _client(launch)
        client.attach({script: [late]})
        client.stopped()
        job = launch.job
        assert job is not None and job_adapters(job)
        launch.proc.kill()  # no chance to clean up
        deadline = time.monotonic() + 10
        while job_adapters(job) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert job_adapters(job) == []
        client.close()
    finally:
        launch.close()

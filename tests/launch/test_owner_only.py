"""Only the job's owner gets in: a registry folder another user planted is refused with the
contract's error (and nothing is written into it); the job's control socket closes on any
other user even when its mode is loosened; another user reads nothing of the registry."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from launch_helpers import SCRIPTS, Launch, adapter_ports, line_of, wait_for

from dap_client import DAPClient

_OTHER_USER = 65534  # nobody
_AS_ROOT = pytest.mark.skipif(os.geteuid() != 0,
                              reason="needs root (to act as a second local user)")
# An interpreter the other user may run (the venv's may live under a private home).
_SYSTEM_PYTHON = next((p for p in ("/usr/bin/python3", "/usr/local/bin/python3")
                       if os.access(p, os.X_OK)), None)


def _as_other(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=30, check=False,
                          user=_OTHER_USER, cwd="/")


def _rankdebug(runtime: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime))
    return subprocess.run([sys.executable, "-m", "rankdebug", *args], capture_output=True,
                          text=True, timeout=60, check=False, env=env)


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A folder like /tmp (sticky, anyone may create in it) that this user owns, used as
    XDG_RUNTIME_DIR so the registry root is ``<it>/rankdebug``; the other user must reach
    it, so it lives in /tmp itself, not in pytest's private folder."""
    shared = Path(tempfile.mkdtemp(prefix="rankdebug-shared-", dir="/tmp"))
    shared.chmod(0o1777)
    try:
        yield shared
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def _assert_refused(runtime: Path, planted: Path, why: str) -> None:
    """Every verb that reads or writes the registry refuses, saying why, exit 2."""
    for verb in (["launch", "--ranks", "0", "--", sys.executable, "-c", "pass"],
                 ["jobs"], ["stacks", "latest"], ["eval", "latest", "0", "1"]):
        out = _rankdebug(runtime, *verb, "--json") if verb[0] != "launch" else \
            _rankdebug(runtime, "launch", "--json", *verb[1:])
        assert out.returncode == 2, (verb, out)
        (line,) = out.stdout.strip().splitlines()
        message = json.loads(line)["error"]["message"]
        assert str(runtime / "rankdebug") in message and why in message, (verb, message)
        assert "Traceback" not in out.stderr, out.stderr
    human = _rankdebug(runtime, "jobs")
    assert human.returncode == 2 and why in human.stderr and "Traceback" not in human.stderr
    assert os.listdir(planted) == [], "rankdebug wrote into a folder it refused"


def test_a_link_in_the_registry_roots_place_is_refused(tmp_path: Path) -> None:
    runtime = tmp_path / "runtime"
    target = tmp_path / "elsewhere"
    runtime.mkdir(mode=0o700)
    target.mkdir(mode=0o700)
    (runtime / "rankdebug").symlink_to(target)
    _assert_refused(runtime, target, "symbolic link")


def test_a_file_in_the_registry_roots_place_is_refused(tmp_path: Path) -> None:
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    (runtime / "rankdebug").write_text("")
    out = _rankdebug(runtime, "jobs", "--json")
    assert out.returncode == 2 and "not a folder" in json.loads(out.stdout)["error"]["message"]


@_AS_ROOT
@pytest.mark.parametrize("how", ["folder 0777", "link"])
def test_a_registry_root_another_user_planted_is_refused(shared_tmp: Path, how: str) -> None:
    runtime = shared_tmp
    root = runtime / "rankdebug"
    if how == "link":
        bait = runtime / "bait"
        assert _as_other("mkdir", "-m", "777", str(bait)).returncode == 0
        assert _as_other("ln", "-s", str(bait), str(root)).returncode == 0
        _assert_refused(runtime, bait, "symbolic link")
    else:
        assert _as_other("mkdir", "-m", "777", str(root)).returncode == 0
        _assert_refused(runtime, root, "belongs to nobody")


def _send(sock_path: str, body: dict[str, object]) -> bytes:
    """One command on a control socket; what came back before it closed (or 2 s passed)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(2.0)
        s.connect(sock_path)
        s.sendall(json.dumps(body).encode() + b"\n")
        try:
            return s.recv(65536)
        except OSError:
            return b""


@_AS_ROOT
@pytest.mark.skipif(_SYSTEM_PYTHON is None, reason="needs a system python3")
@pytest.mark.timeout(120)
def test_control_sockets_close_on_another_user_even_when_reachable(tmp_path: Path) -> None:
    """The job's ctl.sock and an armed rank's rank-N.sock check the peer's uid: with the
    folder and the sockets opened up (as a careless chmod would), the other user's
    command gets no answer; the owner's does. The registry itself is closed to them."""
    probe = ("import json, socket, sys\n"
             "s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(sys.argv[1])\n"
             "try:\n"
             "    s.sendall(json.dumps({'command': sys.argv[2]}).encode() + b'\\n')\n"
             "    print(repr(s.recv(65536)))\n"
             "except OSError as e:\n    print('error', e)\n")
    launch = Launch(["--arm", "--control", "--", sys.executable, str(SCRIPTS / "loop.py")],
                    tmp_path, stdin=subprocess.PIPE)
    try:
        job_dir = Path(str(launch.event("job")["dir"]))
        rank_sock = job_dir / "rank-0.sock"
        wait_for("the rank's handler socket", rank_sock.exists, 60)
        # The registry: the other user cannot list or read it.
        listing = _as_other("ls", str(job_dir.parent))
        assert listing.returncode != 0 and "Permission denied" in listing.stderr
        # Loosen every mode on the way, as a mistake would; the uid check still holds.
        job_dir.parent.chmod(0o711)
        job_dir.chmod(0o711)
        for sock in (job_dir / "ctl.sock", rank_sock):
            sock.chmod(0o666)
        for sock, command in ((job_dir / "ctl.sock", "continue"), (rank_sock, "ping")):
            other = _as_other(str(_SYSTEM_PYTHON), "-c", probe, str(sock), command)
            assert other.returncode == 0, other
            assert other.stdout.strip() in ("b''", "") or other.stdout.startswith("error"), \
                (sock, other.stdout)
        assert b"armed" in _send(str(rank_sock), {"command": "ping"})
        # The owner is answered (no rank was chosen, so the answer is the reason why not).
        answer = json.loads(_send(str(job_dir / "ctl.sock"), {"command": "continue"}))
        assert "no chosen rank" in answer["error"]["message"]
    finally:
        with_dir = locals().get("job_dir")
        if isinstance(with_dir, Path):
            with_dir.parent.chmod(0o700)
        launch.close()


LOOP = str(SCRIPTS / "loop.py")


def _stray(host: str, port: int) -> None:
    """What a port scan does: connect, close."""
    with socket.create_connection((host, port), timeout=10):
        pass


def _garbage(host: str, port: int) -> None:
    """A sender of junk: an HTTP request, a huge Content-Length, bytes that are not DAP."""
    for junk in (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", b"Content-Length: 99999999999\r\n\r\n{",
                 bytes(range(256)) * 4, b"Content-Length: 5\r\n\r\n{oops"):
        with socket.create_connection((host, port), timeout=10) as s, \
                contextlib.suppress(OSError):
            s.sendall(junk)
            s.settimeout(0.5)
            s.recv(4096)


def _stop_and_release(host: str, port: int, late: int) -> DAPClient:
    """The owner's client stops loop.py's rank at ``late``, ends its loop, clears the
    breakpoint and continues; the client, still connected."""
    client = DAPClient(host, port)
    client.attach({LOOP: [late]})
    stopped = client.stopped()
    frame = client.top_frame(stopped["threadId"])
    assert frame["line"] == late
    client.evaluate("done = True", frame["id"])
    client.request("setBreakpoints", {"source": {"path": LOOP}, "breakpoints": []})
    client.cont(stopped["threadId"])
    return client


def _initialize_answered(host: str, port: int, wait: float = 2.0) -> bool:
    """Whether a client that sends ``initialize`` gets an answer within ``wait`` seconds."""
    body = json.dumps({"seq": 1, "type": "request", "command": "initialize",
                       "arguments": {"adapterID": "x"}}).encode()
    with socket.create_connection((host, port), timeout=10) as s:
        s.settimeout(wait)
        try:
            s.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            data = b""
            while b'"command": "initialize"' not in data and b'"command":"initialize"' not in data:
                chunk = s.recv(65536)
                if not chunk:
                    return False
                data += chunk
            return True
        except OSError:
            return False


@pytest.mark.timeout(180)
@pytest.mark.parametrize("mode", ["hit", "start"])
def test_junk_and_second_clients_never_cost_the_rank_its_debugger(tmp_path: Path,
                                                                 mode: str) -> None:
    """Stray connections, junk senders and a second client, before the owner attaches,
    while it is attached and paused, and after it left: the owner's client works
    throughout, the next client attaches, the job ends with 0."""
    late = line_of("loop.py", "# LATE")
    launch = Launch(["--ranks", "0", "--attach", mode, "--", sys.executable, LOOP], tmp_path)
    try:
        ev = launch.event("listening")
        host, port = str(ev["host"]), int(ev["port"])
        _stray(host, port)
        _garbage(host, port)
        first = DAPClient(host, port)
        first.attach({LOOP: [late]})
        stopped = first.stopped()
        # While the owner is paused there: none of this reaches its session.
        _stray(host, port)
        _garbage(host, port)
        _initialize_answered(host, port)  # a second client: answered or not, it is harmless
        frame = first.top_frame(stopped["threadId"])
        assert frame["line"] == late
        assert first.evaluate("1 + 1", frame["id"]) == "2"
        first.request("setBreakpoints", {"source": {"path": LOOP}, "breakpoints": []})
        first.cont(stopped["threadId"])
        first.disconnect()
        if mode == "hit":  # behind its gate the rank is open to the next client: listening
            entry = Path(str(launch.event("job")["dir"])) / "rank-0.json"
            wait_for("rank 0 listening again",
                     lambda: json.loads(entry.read_text())["state"] == "listening", 10)
        _stray(host, port)
        _garbage(host, port)
        client = _stop_and_release(host, port, late)
        assert launch.exited() == 0
        client.close()
    finally:
        launch.close()


_PROBE = '''
import json, socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)
body = json.dumps({"seq": 1, "type": "request", "command": "initialize",
                   "arguments": {"adapterID": "x"}}).encode()
data = b""
try:
    s.sendall(b"Content-Length: %d\\r\\n\\r\\n" % len(body) + body)
    s.settimeout(3)
    while chunk := s.recv(65536):
        data += chunk
except OSError:
    pass
print(data.decode(errors="replace"))
'''


def _other_user_answered(host: str, port: int) -> bool:
    """Whether the other user's ``initialize`` on ``host:port`` is answered."""
    out = _as_other(str(_SYSTEM_PYTHON), "-c", _PROBE, host, str(port))
    return '"command":"initialize"' in out.stdout.replace(" ", "")


def _attach_json(*args: str, env: dict[str, str] | None = None) -> dict[str, object]:
    out = subprocess.run([sys.executable, "-m", "rankdebug", "attach", *args, "--json"],
                         capture_output=True, text=True, timeout=120, check=False,
                         env=dict(os.environ, **(env or {})))
    event: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    assert event.get("event") == "listening", out.stdout + out.stderr
    return event


@_AS_ROOT
@pytest.mark.skipif(_SYSTEM_PYTHON is None, reason="needs a system python3")
@pytest.mark.timeout(180)
@pytest.mark.parametrize("how", ["ptrace", "gdb", "armed"])
def test_another_user_cannot_reach_an_attached_rank(tmp_path: Path, how: str) -> None:
    """``rankdebug attach`` on a process nothing of ours started (injected with ptrace or
    gdb) and on an armed rank: the port it prints, and every port of the adapter behind
    it, answer the owner only; the owner's client then stops the rank and it ends well."""
    if how == "gdb" and shutil.which("gdb") is None:
        pytest.skip("gdb is not installed")
    late = line_of("loop.py", "# LATE")
    launch: Launch | None = None
    proc: subprocess.Popen[bytes] | None = None
    try:
        if how == "armed":
            launch = Launch(["--arm", "--", sys.executable, LOOP], tmp_path)
            job_event = launch.event("job")
            job = str(job_event["job"])
            sock = Path(str(job_event["dir"])) / "rank-0.sock"
            wait_for("the rank's handler socket", sock.exists, 60)
            event = _attach_json(job, "0")
        else:
            proc = subprocess.Popen([sys.executable, LOOP])
            time.sleep(0.5)
            event = _attach_json("--pid", str(proc.pid), env={"RANKDEBUG_INJECT": how})
        host, port = str(event["host"]), int(str(event["port"]))
        assert not _other_user_answered(host, port), "another user got in"
        if proc is not None:  # the injected rank's adapter: owner-only on every port
            ports = adapter_ports(proc.pid)
            assert port in ports, (port, ports)
            for other in ports:
                assert not _other_user_answered("127.0.0.1", other), other
        client = _stop_and_release(host, port, late)
        if launch is not None:
            assert launch.exited() == 0
        else:
            assert proc is not None and proc.wait(timeout=60) == 0
            wait_for("its adapter to end with it", lambda: not adapter_ports(proc.pid), 5)
        client.close()
    finally:
        if launch is not None:
            launch.close()
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()

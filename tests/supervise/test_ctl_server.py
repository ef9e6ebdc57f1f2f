"""The job's control socket (``supervise/ctl_server.py``) on a real Unix socket: owner-only
mode, one connection id per connection in the order they come, each line put on the
supervisor's queue (a bad one as its error answer), answers back on the right connection,
and ``close`` ends the accept loop at once."""

from __future__ import annotations

import json
import os
import queue
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from rankdebug.supervise.ctl_server import CtlServer, Events

WAIT_S = 20.0
_OTHER_USER = 65534  # nobody
_SYSTEM_PYTHON = next((p for p in ("/usr/bin/python3", "/usr/local/bin/python3")
                       if os.access(p, os.X_OK)), None)


def _connect(path: Path) -> socket.socket:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(WAIT_S)
    conn.connect(str(path))
    return conn


def _next(events: Events) -> tuple[str, int, dict[str, Any] | None]:
    return events.get(timeout=WAIT_S)


def _line(conn: socket.socket) -> dict[str, Any]:
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(4096)
        assert chunk, "closed before a whole line"
        data += chunk
    return dict(json.loads(data))


def _serving(tmp_path: Path) -> tuple[CtlServer, Events, Path]:
    tmp_path.chmod(0o700)
    path = tmp_path / "ctl.sock"
    events: Events = queue.Queue()
    ctl = CtlServer(str(path), events)
    ctl.open()
    ctl.serve()
    return ctl, events, path


def test_lines_reach_the_queue_and_answers_their_connection(tmp_path: Path) -> None:
    ctl, events, path = _serving(tmp_path)
    try:
        assert path.stat().st_mode & 0o777 == 0o600
        first, second = _connect(tmp_path / "ctl.sock"), _connect(path)
        first.sendall(b'{"event": "hello", "rank": 0}\n')
        assert _next(events) == ("msg", 1, {"event": "hello", "rank": 0})
        second.sendall(b"not json\n")
        kind, cid, body = _next(events)
        assert (kind, cid) == ("bad", 2) and body is not None
        assert set(body) == {"error"} and isinstance(body["error"]["message"], str)
        ctl.reply(2, {"ok": True})
        ctl.reply(1, {"ok": 1})
        assert _line(second) == {"ok": True} and _line(first) == {"ok": 1}
        first.close()
        assert _next(events) == ("eof", 1, None)
        ctl.reply(1, {"late": True})  # a connection gone: nothing to send it to, no error
        second.close()
        assert _next(events) == ("eof", 2, None)
    finally:
        ctl.close()


def test_close_ends_the_accept_loop_at_once(tmp_path: Path) -> None:
    ctl, events, path = _serving(tmp_path)
    conn = _connect(path)
    conn.sendall(b'{"event": "x"}\n')
    assert _next(events)[0] == "msg"
    started = time.monotonic()
    ctl.close()
    deadline = started + WAIT_S
    while [t for t in threading.enumerate() if t.name == "rankdebug-ctl"]:
        assert time.monotonic() < deadline, "the accept loop is still there"
        time.sleep(0.01)
    with pytest.raises(OSError):
        _connect(path)  # nobody listens any more
    conn.sendall(b'{"event": "y"}\n')  # a connection already in goes on to its end
    assert _next(events) == ("msg", 1, {"event": "y"})
    conn.close()
    assert _next(events) == ("eof", 1, None)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (to act as a second local user)")
@pytest.mark.skipif(_SYSTEM_PYTHON is None, reason="needs a system python3")
def test_another_user_is_closed_on_even_when_the_socket_is_reachable() -> None:
    shared = Path(tempfile.mkdtemp(prefix="rankdebug-ctl-", dir="/tmp"))  # reachable by all
    ctl, events, path = _serving(shared)
    try:
        shared.chmod(0o755)
        path.chmod(0o666)  # as a careless chmod would: the kernel's word still keeps it out
        probe = ("import socket, sys\n"
                 "s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1])\n"
                 "print(repr(s.recv(4096)))\n")
        got = subprocess.run(["setpriv", f"--reuid={_OTHER_USER}", f"--regid={_OTHER_USER}",
                              "--clear-groups", str(_SYSTEM_PYTHON), "-c", probe, str(path)],
                             capture_output=True, text=True, timeout=60, check=False)
        assert got.stdout.strip() == "b''", got  # closed on, nothing said
        owner = _connect(path)
        owner.sendall(b'{"event": "mine"}\n')
        assert _next(events) == ("msg", 1, {"event": "mine"})  # the intruder had no id
        assert events.empty()
        owner.close()
    finally:
        ctl.close()
        shutil.rmtree(shared, ignore_errors=True)

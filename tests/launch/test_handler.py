"""The armed rank's handler in this process: its socket protocol, eval's namespace and limits,
its stacks, and what a fork leaves of it (the real-job story is in test_armed.py)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rankdebug.runtime import frames, handler, wire
from rankdebug.runtime.wire import WireError, ask, ask_all


@pytest.fixture
def sock(tmp_path: Path) -> Iterator[str]:
    path = handler.start(str(tmp_path), 3)
    assert path is not None
    try:
        yield path
    finally:
        handler.stop()
    assert not os.path.exists(path)


def test_ping_and_errors_on_one_connection(sock: str) -> None:
    assert ask(sock, {"command": "ping"}) == {"event": "armed", "rank": 3, "pid": os.getpid()}
    with pytest.raises(WireError, match="unknown command 'nope'"):
        ask(sock, {"command": "nope"})
    with pytest.raises(WireError, match="eval needs an expression"):
        ask(sock, {"command": "eval", "expr": "  "})
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(sock)
    with s, s.makefile("rwb") as f:
        for line in (b"not json\n", b"[1, 2]\n", b'{"command": "ping"}\n'):
            f.write(line)
            f.flush()
            reply = json.loads(f.readline())
            assert reply["rank"] == 3
        assert reply["event"] == "armed"  # the connection survived two bad requests


def _user_function(sock: str, out: dict[str, str]) -> None:
    secret_local = 41 + 1  # noqa: F841 (read by eval from the handler's thread)
    done = threading.Event()

    def ask_from_elsewhere() -> None:
        out["local"] = ask(sock, {"command": "eval", "expr": "secret_local * 2"})["text"]
        done.set()

    threading.Thread(target=ask_from_elsewhere).start()
    done.wait(20)


def test_eval_sees_the_main_threads_user_frames(sock: str) -> None:
    out: dict[str, str] = {}
    _user_function(sock, out)  # runs on the main thread: its local is visible
    assert out["local"] == "84"
    got = ask(sock, {"command": "eval", "expr": "'x' * 200_000"})
    assert len(got["text"]) < 100_100 and got["text"].endswith("more characters)")
    assert got["type"] == "str"
    with pytest.raises(WireError, match=r"no result after 0\.5 s"):
        ask(sock, {"command": "eval", "expr": "__import__('time').sleep(3)", "timeout": 0.5})


def test_stacks_are_shaped_like_pyspy_and_hide_the_handler(sock: str) -> None:
    threads = ask(sock, {"command": "stacks"})["threads"]
    main = [t for t in threads if t["os_thread_id"] == os.getpid()]
    assert len(main) == 1 and main[0]["thread_name"] == "MainThread"
    names = [f["name"] for f in main[0]["frames"]]
    assert "test_stacks_are_shaped_like_pyspy_and_hide_the_handler" in names
    assert not [t for t in threads if t["thread_name"].startswith("rankdebug-handler")]
    assert all(set(f) == {"name", "filename", "line"} for t in threads for f in t["frames"])


def test_many_ranks_asked_at_once(tmp_path: Path, sock: str) -> None:
    missing = str(tmp_path / "rank-9.sock")
    got = ask_all([sock, missing, sock], {"command": "ping"})
    assert isinstance(got[0], dict) and isinstance(got[2], dict)
    assert isinstance(got[1], WireError) and "no control socket" in str(got[1])


def _server(path: str, reply: bytes | None) -> socket.socket:
    """A socket at ``path`` that answers each connection with ``reply`` (None: never)."""
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(16)

    def serve() -> None:
        kept = []
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            conn.recv(1 << 16)
            if reply is None:
                kept.append(conn)  # holds it open, silent
                continue
            with conn:
                conn.sendall(reply)

    threading.Thread(target=serve, daemon=True).start()
    return srv


def test_all_at_once_keeps_order_and_says_what_each_rank_did(
        tmp_path: Path, sock: str, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = {name: str(tmp_path / f"{name}.sock") for name in
             ("silent", "closes", "junk", "refuses", "half")}
    servers = [_server(paths["silent"], None), _server(paths["closes"], b""),
               _server(paths["junk"], b"[1, 2]\n"),
               _server(paths["refuses"], b'{"event": "error", "message": "no way"}\n'),
               _server(paths["half"], b'{"event": "arm')]
    try:
        order = [sock, paths["silent"], str(tmp_path / "gone.sock"), paths["closes"],
                 paths["junk"], paths["refuses"], paths["half"], sock]
        t0 = time.monotonic()
        got = wire.ask_timed(order, {"command": "ping"}, timeout=1.0)
        assert time.monotonic() - t0 < 3  # one timeout for them all, not one each
        replies = [r for r, _ in got]
        assert isinstance(replies[0], dict) and replies[0]["event"] == "armed"
        assert isinstance(replies[7], dict) and replies[7]["rank"] == 3
        messages = [str(r) for r in replies[1:7]]
        assert "did not answer within 1 s" in messages[0]
        assert "no control socket" in messages[1]
        assert "closed its control socket without an answer" in messages[2]
        assert "not a JSON object" in messages[3]
        assert messages[4] == "no way" and isinstance(replies[5], WireError)
        assert replies[5].reply == {"event": "error", "message": "no way"}
        assert "not a JSON object" in messages[5]
        assert 0.9 < got[1][1] < 3 and got[0][1] < 1
        # More ranks than sockets it may open at once: they wait their turn.
        monkeypatch.setattr(wire, "_open_files_allowed", lambda: 2)
        many = wire.ask_all([sock] * 9 + [paths["refuses"]], {"command": "ping"}, timeout=5)
        assert [r["rank"] for r in many[:9] if isinstance(r, dict)] == [3] * 9
        assert isinstance(many[9], WireError)
    finally:
        for srv in servers:
            srv.close()


def test_a_stacks_request_loads_nothing_for_collectives_without_torch(tmp_path: Path) -> None:
    code = ("import sys, json; from rankdebug.runtime import handler; "
            "r = handler.handle({'command': 'stacks'}); "
            "print(json.dumps([r['collectives'], 'rankdebug.runtime.collectives' in sys.modules,"
            " 'ast' in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert json.loads(out.stdout) == [None, False, False]


def test_a_forked_child_does_not_serve(sock: str) -> None:
    pid = os.fork()
    if pid == 0:
        closed = handler.handler.sock is None
        handler.stop()  # what the child's atexit would do: not the rank's to remove
        os._exit(0 if closed else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert os.path.exists(sock)
    assert ask(sock, {"command": "ping"})["event"] == "armed"


def test_not_a_socket_is_refused(tmp_path: Path) -> None:
    plain = tmp_path / "rank-0.sock"
    plain.write_text("")
    with pytest.raises(WireError, match="not a control socket"):
        ask(str(plain), {"command": "ping"})


def test_user_files() -> None:
    assert frames.user_file("/home/me/proj/train.py")
    assert not frames.user_file("/usr/lib/python3.11/threading.py")
    assert not frames.user_file("/venv/lib/python3.11/site-packages/torch/nn/module.py")
    assert not frames.user_file("<frozen runpy>")
    assert not frames.user_file("/tmp/rankdebug-0/job/boot/rankdebug/runtime/handler.py")

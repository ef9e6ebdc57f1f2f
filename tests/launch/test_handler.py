"""The armed rank's handler in this process: its socket protocol, eval's namespace and limits,
its stacks, and what a fork leaves of it (the real-job story is in test_armed.py)."""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from rankdebug.runtime import frames, handler
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

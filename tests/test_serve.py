"""The one accept loop (``rankdebug.runtime.serve``), with real sockets: many clients served,
a failing handler ends only its own connection, the door and the cap turn connections away
saying why, and a stop, an idle spell or ``alive`` ends the loop at once, leaving no thread."""

from __future__ import annotations

import contextlib
import os
import socket
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from rankdebug.runtime import peercred
from rankdebug.runtime.serve import Door, Loop, Server

WAIT_S = 20.0  # for what should happen at once: a loaded machine may be slow


def _listener() -> socket.socket:
    return socket.create_server(("127.0.0.1", 0))


def _connect(server: Server) -> socket.socket:
    conn = socket.create_connection(server.listener.getsockname()[:2], timeout=WAIT_S)
    return conn


def _read_all(conn: socket.socket) -> bytes:
    """Everything the server says until it closes the connection (closed unread, the
    connection is reset: a TCP server's close with our words unread)."""
    data = b""
    with conn, contextlib.suppress(ConnectionResetError):
        while chunk := conn.recv(65536):
            data += chunk
    return data


def _echo(conn: socket.socket, n: int) -> None:
    """One line in, the same line back with the connection's number."""
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(65536)
        if not chunk:
            return
        data += chunk
    conn.sendall(f"{n}:".encode() + data)


def _ask(server: Server, line: bytes) -> bytes:
    conn = _connect(server)
    conn.sendall(line)
    return _read_all(conn)


def _threads(prefix: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith(prefix)]


def _until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check():
        assert time.monotonic() < deadline, f"not within {WAIT_S} s: {what}"
        time.sleep(0.01)


def _stopped(server: Server) -> None:
    """Stop, and the loop's thread and every connection's thread are gone at once."""
    started = time.monotonic()
    server.stop()
    assert server.thread is not None
    server.thread.join(WAIT_S)
    assert not server.thread.is_alive()
    assert time.monotonic() - started < WAIT_S
    _until(lambda: not _threads(server.loop.name), "no thread of the server's left")
    assert server.listener.fileno() == -1


def test_many_clients_at_once_each_on_a_thread_of_its_own() -> None:
    server = Server(_listener(), _echo, Loop(name="t-many", threads="t-many-{n}"))
    server.start()
    answers: dict[int, bytes] = {}

    def client(i: int) -> None:
        answers[i] = _ask(server, f"client {i}\n".encode())

    clients = [threading.Thread(target=client, args=(i,)) for i in range(40)]
    for c in clients:
        c.start()
    for c in clients:
        c.join(WAIT_S)
    assert len(answers) == 40
    numbers = set()
    for i, answer in answers.items():
        n, _, line = answer.partition(b":")
        assert line == f"client {i}\n".encode()
        numbers.add(int(n))
    assert numbers == set(range(1, 41))  # each connection numbered once
    _stopped(server)


def test_a_connection_s_thread_is_named_by_its_number() -> None:
    seen: list[str] = []

    def name(conn: socket.socket, n: int) -> None:
        seen.append(threading.current_thread().name)
        conn.sendall(b"ok")

    server = Server(_listener(), name, Loop(name="t-name", threads="t-name-{n}"))
    server.start()
    assert _ask(server, b"") == b"ok"
    assert _ask(server, b"") == b"ok"
    assert seen == ["t-name-1", "t-name-2"]
    assert server.thread is not None and server.thread.name == "t-name"
    _stopped(server)


@pytest.mark.parametrize("threads", ["t-raise-{n}", None])
def test_a_handler_that_raises_ends_its_connection_only(threads: str | None) -> None:
    errors: list[BaseException] = []

    def handle(conn: socket.socket, n: int) -> None:
        if n % 2:
            raise RuntimeError(f"connection {n} breaks")
        _echo(conn, n)

    server = Server(_listener(), handle,
                    Loop(name="t-raise", threads=threads, on_error=errors.append))
    server.start()
    for n in range(1, 7):
        answer = _ask(server, b"hi\n")
        # the one that raised is closed with nothing said; the next is served as ever
        assert answer == (b"" if n % 2 else f"{n}:hi\n".encode())
    assert [str(e) for e in errors] == ["connection 1 breaks", "connection 3 breaks",
                                        "connection 5 breaks"]
    _until(lambda: server.serving == 0, "every connection released")
    _stopped(server)


def test_the_door_turns_away_saying_why_and_the_loop_goes_on() -> None:
    asked: list[int] = []

    def admit(conn: socket.socket) -> bool:
        asked.append(1)
        return len(asked) != 2  # the second is turned away

    server = Server(_listener(), _echo, Loop(name="t-door", threads="t-door-{n}"),
                    Door(admit=admit, refused=b"not yours\r\n"))
    server.start()
    assert _ask(server, b"a\n") == b"1:a\n"
    # (saying nothing first: a TCP close with words unread resets, and may lose the answer)
    assert _read_all(_connect(server)) == b"not yours\r\n"
    assert _ask(server, b"c\n") == b"2:c\n"  # numbers go to connections let in only
    _stopped(server)


def test_a_door_check_that_fails_lets_that_one_out_only() -> None:
    errors: list[BaseException] = []
    calls: list[int] = []

    def admit(conn: socket.socket) -> bool:
        calls.append(1)
        if len(calls) == 1:
            raise OSError("no answer from the kernel")
        return True

    server = Server(_listener(), _echo,
                    Loop(name="t-check", threads="t-check-{n}", on_error=errors.append),
                    Door(admit=admit, refused=b"no"))
    server.start()
    assert _ask(server, b"a\n") == b""
    assert _ask(server, b"b\n") == b"1:b\n"
    assert [str(e) for e in errors] == ["no answer from the kernel"]
    _stopped(server)


def test_the_cap_refuses_the_one_over_it_until_one_ends() -> None:
    release = threading.Event()
    held: list[int] = []

    def hold(conn: socket.socket, n: int) -> None:
        held.append(n)
        release.wait(WAIT_S)
        conn.sendall(b"done")

    server = Server(_listener(), hold, Loop(name="t-cap", threads="t-cap-{n}"),
                    Door(cap=2, full=b"2 connections are open already\n"))
    server.start()
    first, second = _connect(server), _connect(server)
    _until(lambda: held == [1, 2], "two connections held")
    assert server.serving == 2
    assert _read_all(_connect(server)) == b"2 connections are open already\n"
    release.set()
    assert _read_all(first) == b"done" and _read_all(second) == b"done"
    _until(lambda: server.serving == 0, "both released")
    assert _read_all(_connect(server)) == b"done"  # a slot again: served
    assert held == [1, 2, 3]
    _stopped(server)


def test_stop_ends_a_waiting_loop_at_once_with_no_traceback() -> None:
    errors: list[BaseException] = []
    hooked: list[threading.ExceptHookArgs] = []
    before = threading.excepthook
    threading.excepthook = hooked.append  # what a thread's traceback would go to
    try:
        server = Server(_listener(), _echo,
                        Loop(name="t-stop", threads="t-stop-{n}", on_error=errors.append))
        server.start()
        assert _ask(server, b"x\n") == b"1:x\n"
        time.sleep(0.2)  # back in accept()
        _stopped(server)
    finally:
        threading.excepthook = before
    assert errors == [] and hooked == []


def test_stop_leaves_a_connection_being_served_to_its_end() -> None:
    release = threading.Event()

    def hold(conn: socket.socket, n: int) -> None:
        release.wait(WAIT_S)
        conn.sendall(b"still here")

    server = Server(_listener(), hold, Loop(name="t-keep", threads="t-keep-{n}"))
    server.start()
    conn = _connect(server)
    _until(lambda: server.serving == 1, "served")
    server.stop()
    assert server.thread is not None
    server.thread.join(WAIT_S)
    assert not server.thread.is_alive()
    release.set()
    assert _read_all(conn) == b"still here"
    _until(lambda: not _threads("t-keep"), "the connection's thread gone")


def test_run_on_the_calling_thread_ends_when_idle_and_closes_the_listener() -> None:
    server = Server(_listener(), _echo, Loop(name="t-idle", idle_s=0.5))
    started = time.monotonic()
    server.run()
    assert 0.5 <= time.monotonic() - started < WAIT_S
    assert server.listener.fileno() == -1


def test_a_connection_let_in_starts_the_idle_spell_again() -> None:
    server = Server(_listener(), _echo, Loop(name="t-idle2", idle_s=4.0))
    server.start()
    time.sleep(2.5)
    assert _ask(server, b"a\n") == b"1:a\n"  # inline: answered on the loop's thread
    time.sleep(2.5)  # 5 s since the start, 2.5 s since the connection: still serving
    assert _ask(server, b"b\n") == b"2:b\n"
    assert server.thread is not None
    server.thread.join(WAIT_S)
    assert not server.thread.is_alive() and server.listener.fileno() == -1


def test_alive_ends_the_loop_while_nobody_connects() -> None:
    going = threading.Event()
    going.set()
    server = Server(_listener(), _echo,
                    Loop(name="t-alive", alive=going.is_set, every_s=0.1))
    server.start()
    assert _ask(server, b"a\n") == b"1:a\n"
    going.clear()
    assert server.thread is not None
    server.thread.join(WAIT_S)
    assert not server.thread.is_alive() and server.listener.fileno() == -1


def test_alive_asked_of_each_connection_before_it_is_let_in() -> None:
    """As the node agent: its socket file removed, the next connection ends it unserved."""
    folder = Path(tempfile.mkdtemp(prefix="t-serve-"))
    path = folder / "s"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(8)
    served: list[int] = []

    def handle(conn: socket.socket, n: int) -> None:
        served.append(n)
        conn.sendall(b"ok")

    server = Server(listener, handle, Loop(name="t-gone", alive=path.exists),
                    Door(admit=peercred.same_user))
    server.start()

    def ask() -> bytes:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.settimeout(WAIT_S)
        conn.connect(str(path))
        return _read_all(conn)

    assert ask() == b"ok"  # the owner, by the kernel's word
    inode = path.stat().st_ino
    os.rename(path, folder / "moved")  # still listening; its name gone from the folder
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(WAIT_S)
    conn.connect(str(folder / "moved"))
    assert (folder / "moved").stat().st_ino == inode
    assert _read_all(conn) == b""
    assert server.thread is not None
    server.thread.join(WAIT_S)
    assert not server.thread.is_alive() and served == [1]
    (folder / "moved").unlink()
    folder.rmdir()


def test_an_inline_handler_serves_one_at_a_time_in_order() -> None:
    order: list[int] = []

    def handle(conn: socket.socket, n: int) -> None:
        order.append(n)
        _echo(conn, n)

    server = Server(_listener(), handle, Loop(name="t-inline"))
    server.start()
    for i in range(1, 6):
        assert _ask(server, b"x\n") == f"{i}:x\n".encode()
    assert order == [1, 2, 3, 4, 5]
    assert not _threads("t-inline-")  # no thread per connection
    _stopped(server)

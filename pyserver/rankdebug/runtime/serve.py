"""One accept loop for rankdebug's listening sockets: who is let in, what the others are
told, a thread (or a call) per connection, a cap on connections at once, and a clean stop.

    server = Server(listener, handle, Loop(name="rankdebug-ctl", threads="rankdebug-ctl-{n}"),
                    Door(admit=same_user))
    server.start()   # the loop on a daemon thread named ``name`` (``run()``: on this one)
    server.stop()    # the loop ends at once, without a traceback; connections go on

Each accepted connection is, in order: closed, and the loop ended, if ``Loop.alive()``
says so; closed with ``Door.refused`` said to it if ``Door.admit`` turns it away; closed
with ``Door.full`` said to it if ``Door.cap`` connections are being served; otherwise
numbered (1, 2, …) and given to ``handle(conn, n)``, on a thread of its own
(``Loop.threads``, where ``{n}`` is its number) or in the loop itself (``threads=None``:
for a handler that forks, or a server of one session). The connection is closed once
``handle`` returns; an error in ``handle`` goes to ``Loop.on_error`` and ends neither the
loop nor another connection. The server owns the listener: it is closed when the loop ends.
An accept error that is not the listener's closing (too many open files, a connection
aborted before it was accepted) is waited out.

It lives in ``runtime`` (standard library only, Python 3.9) so that every layer may use it,
the rank's handler included. Its users: the rank's handler (``runtime/handler.py``),
``supervise/ctl_server.py``, ``supervise/gates/gate.py``, ``jobs/nodes/node_agent.py``,
``jobs/nodes/tunnel.py``. Two places that serve are not accept loops of ours and do not use
it: ``adapter/main.py`` wraps the handler debugpy's adapter gives its own ``sockets.serve``
(the loop is debugpy's), and ``warm.py`` reads one request from a pipe.
"""

from __future__ import annotations

import contextlib
import socket
import sys
import threading
import time

# Loaded in every armed rank: no dataclasses (inspect, ast) nor typing at run time.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

RETRY_S = 0.1  # after an accept error that is not the listener's end
TELL_S = 1.0  # how long a refused peer may take to receive why


def _anyone(_conn: socket.socket) -> bool:
    return True


def _thread(name: str, target: Callable[..., None], *args: Any) -> threading.Thread:
    thread = threading.Thread(target=target, args=args, name=name, daemon=True)
    thread.start()
    return thread


def _print_error(exc: BaseException) -> None:
    import traceback

    traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)


class Door:
    """Who gets in, and what those turned away are told before their connection closes."""

    __slots__ = ("admit", "cap", "full", "refused")

    def __init__(self, admit: Callable[[socket.socket], bool] = _anyone,
                 refused: bytes = b"", cap: int = 0, full: bytes = b"") -> None:
        self.admit = admit
        self.refused = refused  # told to a connection ``admit`` turns away
        self.cap = cap  # connections served at once (0: no cap)
        self.full = full  # told to a connection over the cap


class Loop:
    """How the loop runs, and what ends it besides ``Server.stop``: ``name``, the loop's
    thread (``Server.start``); ``threads``, each connection's thread, ``{n}`` its number
    (None: handled in the loop). The loop ends once ``alive`` says False (asked before each
    accept, of each connection before it is let in, and every ``every_s`` while none comes)
    or after ``idle_s`` with no connection let in. ``spawn(name, target, *args)`` starts a
    daemon thread (the rank's handler starts ones debugpy must not trace); ``on_error`` is
    told of a handler's error."""

    __slots__ = ("alive", "every_s", "idle_s", "name", "on_error", "spawn", "threads")

    def __init__(self, name: str, threads: str | None = None,  # noqa: PLR0913
                 alive: Callable[[], bool] | None = None, every_s: float | None = None,
                 idle_s: float | None = None,
                 spawn: Callable[..., threading.Thread] = _thread,
                 on_error: Callable[[BaseException], None] = _print_error) -> None:
        self.name = name
        self.threads = threads
        self.alive = alive
        self.every_s = every_s
        self.idle_s = idle_s
        self.spawn = spawn
        self.on_error = on_error


class Server:
    def __init__(self, listener: socket.socket, handle: Callable[[socket.socket, int], None],
                 loop: Loop, door: Door | None = None) -> None:
        self.listener = listener
        self.loop = loop
        self.thread: threading.Thread | None = None
        self._handle = handle
        self._door = door or Door()
        self._stopping = False
        self._count = 0
        self._busy = 0
        self._lock = threading.Lock()

    def start(self) -> threading.Thread:
        """Run the loop on a daemon thread named ``name``."""
        self.thread = self.loop.spawn(self.loop.name, self.run)
        return self.thread

    def stop(self) -> None:
        """End the loop (now, even from another thread) and close the listener. Connections
        being served go on to their own end."""
        self._stopping = True
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes accept(); close alone does not
        with contextlib.suppress(OSError):
            self.listener.close()

    @property
    def serving(self) -> int:
        """Connections being served now."""
        with self._lock:
            return self._busy

    def run(self) -> None:
        """The loop, on the calling thread, until ``stop``, ``alive`` or ``idle_s`` ends it."""
        idle_s = self.loop.idle_s
        try:
            idle_until = None if idle_s is None else time.monotonic() + idle_s
            while not self._stopping and (self.loop.alive is None or self.loop.alive()):
                wait = self._wait(idle_until)
                if wait is not None and wait <= 0:
                    return  # idle
                conn = self._accept(wait)
                if conn is None:
                    if self._gone():
                        return
                    continue
                if self._let_in(conn) and idle_s is not None:
                    idle_until = time.monotonic() + idle_s
        finally:
            self.stop()

    def _wait(self, idle_until: float | None) -> float | None:
        """How long the next accept may wait (None: for ever)."""
        waits = [] if self.loop.every_s is None else [self.loop.every_s]
        if idle_until is not None:
            waits.append(idle_until - time.monotonic())
        return min(waits) if waits else None

    def _accept(self, wait: float | None) -> socket.socket | None:
        try:
            self.listener.settimeout(wait)
            conn, _ = self.listener.accept()
        except socket.timeout:  # TimeoutError from 3.10; named so for 3.9
            return None
        except OSError:
            if not self._gone():
                time.sleep(RETRY_S)  # e.g. out of file descriptors: some may close
            return None
        return conn

    def _gone(self) -> bool:
        return self._stopping or self.listener.fileno() == -1

    def _let_in(self, conn: socket.socket) -> bool:
        """Hand ``conn`` to the handler, or close it (saying why); whether it was let in."""
        if self.loop.alive is not None and not self.loop.alive():
            self._stopping = True
            _close(conn)
            return False
        try:
            if not self._door.admit(conn):
                _tell(conn, self._door.refused)
                return False
        except Exception as exc:  # a check that fails lets nobody in
            _close(conn)
            self.loop.on_error(exc)
            return False
        with self._lock:
            full = 0 < self._door.cap <= self._busy
            if not full:
                self._busy += 1
                self._count += 1
            n = self._count
        if full:
            _tell(conn, self._door.full)
            return False
        if self.loop.threads is None:
            self._serve(conn, n)
            return True
        try:
            self.loop.spawn(self.loop.threads.replace("{n}", str(n)), self._serve, conn, n)
        except Exception as exc:  # no thread to be had (RuntimeError): this one goes
            self._done(conn)
            self.loop.on_error(exc)
        return True

    def _serve(self, conn: socket.socket, n: int) -> None:
        try:
            self._handle(conn, n)
        except Exception as exc:  # this connection's end, not the loop's
            self.loop.on_error(exc)
        finally:
            self._done(conn)

    def _done(self, conn: socket.socket) -> None:
        _close(conn)
        with self._lock:
            self._busy -= 1


def _close(conn: socket.socket) -> None:
    with contextlib.suppress(OSError):
        conn.close()


def _tell(conn: socket.socket, why: bytes) -> None:
    """Say ``why`` (if anything) to a connection turned away, then close it."""
    if why:
        with contextlib.suppress(OSError):
            conn.settimeout(TELL_S)
            conn.sendall(why)
    _close(conn)

"""The wire protocol of every rankdebug socket: JSON objects, one per line, UTF-8.

Spoken by a rank to its supervisor (``runtime.reporting`` → ``supervise``) and by the tools
to an armed rank's control socket (``jobs`` and ``supervise`` → ``runtime.handler``): one
request per line, one reply per line. Stdlib only, Python 3.9 and later, so the rank side
can import it.
"""

from __future__ import annotations

import json
import os
import socket
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any, Iterator

MAX_LINE = 64 << 20  # a stacks reply of a rank with many threads stays far below this
ASK_TIMEOUT_S = 10.0


class WireError(Exception):
    """The other end did not answer, answered with an error (``reply``), or spoke something
    else."""

    def __init__(self, message: str, reply: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.reply = reply


def encode(message: dict[str, Any]) -> bytes:
    return (json.dumps(message) + "\n").encode()


def decode(line: bytes | str) -> dict[str, Any]:
    """One line → its object; ValueError (with what is wrong, in a sentence) when it is not
    a JSON object."""
    try:
        message = json.loads(line)
    except RecursionError:  # thousands of nested brackets: no traceback, an answer
        raise ValueError("the line nests too deeply to be a message") from None
    except UnicodeDecodeError:
        raise ValueError("the line is not UTF-8 text") from None
    except ValueError as exc:
        raise ValueError(f"the line is not JSON ({exc})") from None
    if not isinstance(message, dict):
        raise ValueError(f"a message is a JSON object, not {type(message).__name__}")
    return message


def send(sock: socket.socket, message: dict[str, Any]) -> None:
    sock.sendall(encode(message))


def read(reader: IO[bytes], limit: int = MAX_LINE) -> dict[str, Any] | None:
    """The next message, None at the end of the stream; ValueError on a bad line."""
    line = reader.readline(limit)
    return decode(line) if line else None


def lines(reader: IO[bytes], limit: int = MAX_LINE) -> Iterator[dict[str, Any] | str]:
    """Every line to the end of the stream: its object, or what is wrong with it (one
    sentence) for a line that is not a JSON object. A line longer than ``limit`` is read
    past in pieces, never held whole."""
    while True:
        line = reader.readline(limit)
        if not line:
            return
        if len(line) >= limit and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):
                line = reader.readline(limit)
            yield f"the line is longer than {limit:,} bytes"
            continue
        if not line.strip():
            continue  # an empty line asks nothing
        try:
            yield decode(line)
        except ValueError as exc:
            yield str(exc)


def messages(reader: IO[bytes]) -> Iterator[dict[str, Any]]:
    """Every message to the end of the stream; lines that are not JSON objects are skipped."""
    for line in reader:
        try:
            yield decode(line)
        except ValueError:
            continue


def check_socket(path: str) -> None:
    """Only a socket of this user's: a request may carry code to evaluate."""
    try:
        info = os.lstat(path)
    except FileNotFoundError as exc:
        raise WireError("the rank has no control socket (it ended, or the job is not "
                        "armed)") from exc
    except OSError as exc:
        raise WireError(f"cannot reach the rank's control socket: {exc}") from exc
    if not stat.S_ISSOCK(info.st_mode) or info.st_uid != os.getuid():
        raise WireError(f"{path} is not a control socket of this user")


def ask(path: str, request: dict[str, Any], timeout: float = ASK_TIMEOUT_S) -> dict[str, Any]:
    """Send one request to the rank's socket at ``path``; its reply (an ``error`` reply, or
    no reply, raises)."""
    reply, _ = ask_timed([path], request, timeout)[0]
    if isinstance(reply, WireError):
        raise reply
    return reply


def ask_all(paths: list[str], request: dict[str, Any],
            timeout: float = ASK_TIMEOUT_S) -> list[dict[str, Any] | WireError]:
    """``ask`` every rank at once; a reply or the error, in order (see ``ask_timed``)."""
    return [reply for reply, _ in ask_timed(paths, request, timeout)]


def ask_timed(paths: list[str], request: dict[str, Any], timeout: float = ASK_TIMEOUT_S,
              ) -> list[tuple[dict[str, Any] | WireError, float]]:
    """``ask`` every rank at once, from this thread (one selector, no thread per rank: a
    few hundred ranks cost milliseconds here and are answered as fast as they answer):
    per rank, its reply or the error ``ask`` would raise, and the seconds it took. Each
    rank has ``timeout`` from the moment its request went out. At most as many sockets are
    open at once as this process may open files (less a margin); the rest wait their turn.
    """
    import selectors
    import time

    out: list[tuple[dict[str, Any] | WireError, float]] = [
        (WireError("no answer"), 0.0)] * len(paths)
    data = encode(request)
    sel = selectors.DefaultSelector()
    waiting: dict[socket.socket, tuple[int, float, bytearray]] = {}
    todo = list(range(len(paths)))
    todo.reverse()
    room = _open_files_allowed()

    def done(sock: socket.socket, result: dict[str, Any] | WireError) -> None:
        i, started, _ = waiting.pop(sock)
        sel.unregister(sock)
        sock.close()
        out[i] = (result, time.monotonic() - started)

    try:
        while todo or waiting:
            while todo and len(waiting) < room:
                i = todo.pop()
                started = time.monotonic()
                opened = _send(paths[i], data, timeout)
                if isinstance(opened, WireError):
                    out[i] = (opened, time.monotonic() - started)
                    continue
                waiting[opened] = (i, started, bytearray())
                sel.register(opened, selectors.EVENT_READ, opened)
            if not waiting:
                continue
            now = time.monotonic()
            first = min(started for _, started, _ in waiting.values())
            for key, _ in sel.select(max(0.0, first + timeout - now)):
                ready: socket.socket = key.data
                got = _receive(ready, waiting[ready][2])
                if got is not None:
                    done(ready, got)
            now = time.monotonic()
            for sock in [s for s, (_, started, _) in waiting.items() if now - started >= timeout]:
                done(sock, _late(timeout))
    finally:
        for sock in waiting:
            sock.close()
        sel.close()
    return out


def _open_files_allowed() -> int:
    """How many sockets ``ask_timed`` keeps open at once."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        if soft == resource.RLIM_INFINITY:
            soft = 4096
    except (ImportError, OSError, ValueError):
        soft = 1024
    return max(8, min(4096, soft - 128))


def _send(path: str, data: bytes, timeout: float) -> socket.socket | WireError:
    """A connection to the rank at ``path`` with the request sent, ready to read."""
    try:
        check_socket(path)
    except WireError as exc:
        return exc
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(path)
        sock.sendall(data)
        sock.setblocking(False)
    except OSError as exc:
        sock.close()
        if isinstance(exc, socket.timeout):
            return _late(timeout)
        return WireError(f"cannot reach the rank: {exc.strerror or exc}")
    return sock


def _late(timeout: float) -> WireError:
    return WireError(f"the rank did not answer within {timeout:g} s (is it holding the GIL in "
                     "native code?)")


def _receive(sock: socket.socket, buffer: bytearray) -> dict[str, Any] | WireError | None:
    """Read what the rank sent so far; its reply once the line is whole, else None."""
    try:
        chunk = sock.recv(1 << 16)
    except (BlockingIOError, InterruptedError):
        return None
    except OSError as exc:
        return WireError(f"cannot reach the rank: {exc.strerror or exc}")
    end = chunk.find(b"\n")
    if end < 0 and chunk and len(buffer) + len(chunk) < MAX_LINE:
        buffer += chunk
        return None
    line = bytes(buffer) + (chunk[:end + 1] if end >= 0 else chunk)
    if not line:
        return WireError("the rank closed its control socket without an answer")
    try:
        reply = decode(line)
    except ValueError:
        return WireError("the rank's answer is not a JSON object")
    if reply.get("event") == "error":
        return WireError(str(reply.get("message") or "the rank reported an error"), reply)
    return reply

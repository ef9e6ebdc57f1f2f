"""The wire protocol of every rankdebug socket: JSON objects, one per line, UTF-8.

Spoken by a rank to its supervisor (``runtime.debug`` → ``supervise.job``) and by the tools
to an armed rank's control socket (``jobs`` and ``supervise`` → ``runtime.handler``): one
request per line, one reply per line. Stdlib only, Python 3.9 and later, so the rank side
can import it.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import threading

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
    """One line → its object; ValueError when it is not a JSON object."""
    message = json.loads(line)
    if not isinstance(message, dict):
        raise ValueError("a message is a JSON object")
    return message


def send(sock: socket.socket, message: dict[str, Any]) -> None:
    sock.sendall(encode(message))


def read(reader: IO[bytes], limit: int = MAX_LINE) -> dict[str, Any] | None:
    """The next message, None at the end of the stream; ValueError on a bad line."""
    line = reader.readline(limit)
    return decode(line) if line else None


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
    """Send one request to the rank's socket at ``path``; its reply (an ``error`` reply
    raises)."""
    check_socket(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(path)
        send(sock, request)
        with sock.makefile("rb") as reader:
            reply = read(reader)
    except socket.timeout as exc:  # TimeoutError from 3.10 on
        raise WireError(f"the rank did not answer within {timeout:g} s (is it holding the "
                        "GIL in native code?)") from exc
    except ValueError as exc:
        raise WireError("the rank's answer is not a JSON object") from exc
    except OSError as exc:
        raise WireError(f"cannot reach the rank: {exc.strerror or exc}") from exc
    finally:
        sock.close()
    if reply is None:
        raise WireError("the rank closed its control socket without an answer")
    if reply.get("event") == "error":
        raise WireError(str(reply.get("message") or "the rank reported an error"), reply)
    return reply


def ask_all(paths: list[str], request: dict[str, Any],
            timeout: float = ASK_TIMEOUT_S) -> list[dict[str, Any] | WireError]:
    """``ask`` every rank at once (one thread each); a reply or the error, in order."""
    out: list[dict[str, Any] | WireError] = [WireError("no answer")] * len(paths)

    def one(i: int) -> None:
        try:
            out[i] = ask(paths[i], request, timeout)
        except WireError as exc:
            out[i] = exc

    workers = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(len(paths))]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return out

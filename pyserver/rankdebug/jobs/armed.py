"""Talking to armed ranks (``rankdebug launch --arm``) through their control sockets.

The rank side is ``rankdebug.runtime.handler``: one JSON request per line, one JSON reply
per line. Used by ``rankdebug attach``/``eval``/``stacks`` and by the supervisor.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import threading
from typing import Any

ASK_TIMEOUT_S = 10.0
MAX_REPLY = 64 << 20  # a stacks reply of a rank with many threads stays far below this


class ArmedError(Exception):
    """The rank did not answer, or answered with an error."""


def _check_socket(path: str) -> None:
    """Only a socket of this user's: a request may carry code to evaluate."""
    try:
        info = os.lstat(path)
    except FileNotFoundError as exc:
        raise ArmedError("the rank has no control socket (it ended, or the job is not "
                         "armed)") from exc
    except OSError as exc:
        raise ArmedError(f"cannot reach the rank's control socket: {exc}") from exc
    if not stat.S_ISSOCK(info.st_mode) or info.st_uid != os.getuid():
        raise ArmedError(f"{path} is not a control socket of this user")


def ask(path: str, request: dict[str, Any], timeout: float = ASK_TIMEOUT_S) -> dict[str, Any]:
    """Send one request to the armed rank at ``path``; its reply (an ``error`` reply raises)."""
    _check_socket(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(path)
        sock.sendall((json.dumps(request) + "\n").encode())
        with sock.makefile("rb") as reader:
            line = reader.readline(MAX_REPLY)
    except TimeoutError as exc:
        raise ArmedError(f"the rank did not answer within {timeout:g} s (is it holding the "
                         "GIL in native code?)") from exc
    except OSError as exc:
        raise ArmedError(f"cannot reach the rank: {exc.strerror or exc}") from exc
    finally:
        sock.close()
    if not line:
        raise ArmedError("the rank closed its control socket without an answer")
    try:
        reply = json.loads(line)
    except ValueError as exc:
        raise ArmedError("the rank's answer is not JSON") from exc
    if not isinstance(reply, dict):
        raise ArmedError("the rank's answer is not a JSON object")
    if reply.get("event") == "error":
        raise ArmedError(str(reply.get("message") or "the rank reported an error"))
    return reply


def ask_all(paths: list[str], request: dict[str, Any],
            timeout: float = ASK_TIMEOUT_S) -> list[dict[str, Any] | ArmedError]:
    """``ask`` every rank at once (one thread each); a reply or the error, in order."""
    out: list[dict[str, Any] | ArmedError] = [ArmedError("no answer")] * len(paths)

    def one(i: int) -> None:
        try:
            out[i] = ask(paths[i], request, timeout)
        except ArmedError as exc:
            out[i] = exc

    workers = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(len(paths))]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return out

"""A chosen rank's debug port (its gate) under malformed DAP: requests with fields of the
wrong types, messages that are no DAP message, and framing that is no base protocol. Each
message gets one failed response (or the connection is closed, for broken framing), the
job's stderr has no traceback, and a real client then attaches and stops at its breakpoint
as if nothing had happened."""

from __future__ import annotations

import json
import random
import socket
import sys
from pathlib import Path
from typing import Any

import pytest
from launch_helpers import SCRIPTS, Launch, line_of

from dap_client import DAPClient

LOOP = str(SCRIPTS / "loop.py")
SEED = 31
COUNT = 250
COMMANDS = ["setBreakpoints", "setExceptionBreakpoints", "setFunctionBreakpoints",
            "threads", "stackTrace", "scopes", "variables", "evaluate", "continue", "next",
            "source", "bogus", ""]
WRONG: list[Any] = [None, True, -1, 2**70, 1.5, "", "x" * 3000, [], [1], {}, {"a": [1]},
                    {"path": 7}, [{"line": "x"}], {"line": None}]


def _message(rng: random.Random, seq: int) -> tuple[dict[str, Any], bool]:
    """A message and whether it asks for an answer (every one sent here does)."""
    shape = rng.randrange(5)
    if shape == 0:  # no DAP message: wrong type, seq or command
        body: dict[str, Any] = {"type": rng.choice(["request", "bogus", None, 3, []]),
                                "seq": rng.choice([seq, "1", None, True]),
                                "command": rng.choice([*COMMANDS, 5, None])}
        if body["type"] == "request" and isinstance(body["seq"], int) \
                and not isinstance(body["seq"], bool) and isinstance(body["command"], str):
            body["arguments"] = rng.choice([[], "x", 3])  # still no DAP message
        return body, True
    args: dict[str, Any] = {}
    for _ in range(rng.randrange(1, 4)):
        args[rng.choice(["source", "breakpoints", "lines", "filters", "threadId",
                         "frameId", "expression", "variablesReference", "levels"])] = \
            rng.choice(WRONG)
    return {"type": "request", "seq": seq, "command": rng.choice(COMMANDS),
            "arguments": args}, True


def _frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _read_message(f: Any) -> dict[str, Any] | None:
    length = None
    while True:
        line = f.readline()
        if not line:
            return None
        if line.strip() == b"":
            if length is not None:
                break
            continue
        name, _, value = line.decode().partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    answer: dict[str, Any] = json.loads(f.read(length))
    return answer


@pytest.mark.timeout(240)
def test_malformed_dap_gets_failed_responses_and_the_rank_debugs_on(tmp_path: Path) -> None:
    late = line_of("loop.py", "# LATE")
    launch = Launch(["--ranks", "0", "--attach", "hit", "--", sys.executable, LOOP], tmp_path)
    try:
        ev = launch.event("listening")
        host, port = str(ev["host"]), int(ev["port"])
        rng = random.Random(SEED)
        answered = 0
        with socket.create_connection((host, port), timeout=30) as sock, \
                sock.makefile("rb") as f:
            for seq in range(1, COUNT + 1):
                body, _ = _message(rng, seq)
                sock.sendall(_frame(json.dumps(body).encode()))
                while True:  # events the gate may send meanwhile are not answers
                    got = _read_message(f)
                    assert got is not None, f"the gate closed on {body}"
                    if got.get("type") == "response":
                        break
                answered += 1
        for garbage in (b"Content-Length: abc\r\n\r\n{}", b"\x00\xff" * 50 + b"\r\n\r\n",
                        _frame(b"[" * 100_000), _frame(b"not json"),
                        b"Content-Length: 99999999999\r\n\r\n"):
            with socket.create_connection((host, port), timeout=30) as sock:
                sock.sendall(garbage)
                sock.shutdown(socket.SHUT_WR)
                sock.settimeout(30)
                while sock.recv(4096):
                    pass  # the gate ends this connection: the rank is not touched
        client = DAPClient(host, port)
        client.attach({LOOP: [late]})
        stopped = client.stopped()
        assert client.top_frame(stopped["threadId"])["line"] == late
        print(f"gate: {answered} malformed DAP messages (seed {SEED}) each answered, 5 broken "
              "framings closed; then a client stopped at its breakpoint")
        client.disconnect(terminate=True)
        launch.wait(60)
        text = launch.stderr_path.read_text(errors="replace")
        assert "Traceback" not in text, text
    finally:
        launch.close()

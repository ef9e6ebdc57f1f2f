"""Malformed lines for the channel fuzz tests: random bytes, JSON that is not an object,
and commands of the job's vocabulary with fields of every wrong type. Seeded: a failure
names its seed and message, and the same run gives the same lines."""

from __future__ import annotations

import json
import random
from typing import Any

# Values that a field of any type should be checked against.
WRONG: list[Any] = [
    None, True, False, 0, -1, 2**70, 1.5, float("inf"), "", "x" * 5000, "9" * 5000,
    "0-1000000000", "0-1048575,0-1048575", "-3", "1--2", "all,", "node", "\u0661",
    "a\u0000b", [], [1, "2"], [True], [-1], [2**40], {}, {"a": 1}, [[[]]],
]
GROUP = ["continue", "pause", "step", "run-to", "stop-mode"]
FIELDS = ["ranks", "kind", "file", "line", "mode", "rank", "threadId", "expr"]


def _random_bytes(rng: random.Random) -> bytes:
    raw = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
    line = raw.replace(b"\n", b" ").replace(b"\r", b" ")
    return line if line.strip() else b"?"


def _json_not_object(rng: random.Random) -> bytes:
    return json.dumps(rng.choice([[], 1, None, "pause", True, [{"command": "pause"}],
                                  1.5, -7])).encode()


def _nested(rng: random.Random) -> bytes:
    depth = rng.choice([1000, 20_000, 100_000])
    return rng.choice([b"[" * depth, b'{"a":' * depth, b"[" * depth + b"]" * depth])


def _command(rng: random.Random, names: list[str]) -> bytes:
    body: dict[str, Any] = {"command": rng.choice([*names, *WRONG[:12]])}
    for _ in range(rng.randrange(0, 4)):
        body[rng.choice(FIELDS)] = rng.choice(WRONG)
    return json.dumps(body).encode()


def _attach(rng: random.Random) -> bytes:
    return json.dumps({"command": "attach", "rank": rng.choice([99, -1, "1", 2**62, None,
                                                               [0], 1.0])}).encode()


def _event(rng: random.Random) -> bytes:
    """A rank's report with a field of the wrong type (a well-formed one would be acted on)."""
    name = rng.choice(["started", "listening", "exit", "raised", "handler", "armed", "bogus",
                       7, None])
    body: dict[str, Any] = {"event": name, "rank": rng.choice(["0", -1, 2**40, None, 1.5,
                                                               True, []])}
    return json.dumps(body).encode()


def _both(rng: random.Random) -> bytes:
    return json.dumps({"command": "pause", "event": "listening",
                       "rank": rng.randrange(4)}).encode()


def lines(seed: int, count: int, *, events: bool = True,
          names: list[str] | None = None) -> list[bytes]:
    """``count`` malformed lines (no newline; none empty): each must get one error answer
    and change nothing. ``names``: the command names that are valid on the channel (a
    well-formed one is sent only with wrong fields)."""
    rng = random.Random(seed)
    makers = [_random_bytes, _json_not_object, _nested, _attach, _both]
    if events:
        makers.append(_event)
    known = names or GROUP
    out = []
    for _ in range(count):
        maker = rng.choice([*makers, *[None] * 3])  # commands are the common case
        out.append(_command(rng, known) if maker is None else maker(rng))
    return out


def well_formed(line: bytes, names: list[str]) -> bool:
    """Whether ``line`` is by chance a command the channel would carry out (the fuzz
    tests skip those: 'stop' would end the job)."""
    try:
        body = json.loads(line)
    except (ValueError, RecursionError):
        return False
    return (isinstance(body, dict) and set(body) == {"command"}
            and body["command"] in names)

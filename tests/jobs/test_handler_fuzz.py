"""Nothing sent to a rank's handler socket stops or starves the rank: an armed torchrun job
(gloo, CPU) trains while rank 0's ``rank-0.sock`` gets seeded malformed lines (random bytes,
JSON that is not an object, deep nesting, lines over the size bound, bytes that are no
UTF-8, every command with fields of the wrong types, a request for another rank). Each line
gets exactly one answer (a ping sent after it is answered next), the rank keeps training,
its memory stays bounded, and the job's stderr has no traceback."""

from __future__ import annotations

import json
import random
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from launched import Launch, start, steps, wait_for

from fuzz_lines import WRONG, lines
from rankdebug.runtime import registry

pytestmark = pytest.mark.timeout(300)

SEED = 30
COUNT = 300  # of the shared malformed lines; the handler's own come on top
COMMANDS = ["ping", "stacks", "collectives", "eval", "digest", "release", "attach"]
BUDGET_S = 120.0  # the whole fuzz; each answer within ANSWER_S
ANSWER_S = 30.0
PING = b'{"command": "ping"}\n'


def _raw() -> list[bytes]:
    """Lines a JSON library would never write."""
    return [
        b"", b"   ", b"\x00", b"\xff" * 40, b"\xef\xbb\xbf{}", b'{"command": "ping"',
        b'{"command": "ping"}{"x": 1}', b'{"command": "eval", "expr": "1", "timeout": NaN}',
        b'{"command": "eval", "expr": "1", "timeout": Infinity}',
        b'{"command": "eval", "expr": "1", "timeout": -Infinity}',
        b'{"command": "ping", "rank": ' + b"9" * 5000 + b"}",
        b'{"command": "eval", "expr": "\\ud800"}', b'{"command": "\\udfff"}',
        b'{"command": "eval", "expr": "' + b"1" * (2 << 20) + b'"}',  # over the 1 MiB bound
        b"[" * 200_000, b'{"a":' * 100_000,
    ]


def _field(rng: random.Random) -> Any:
    return rng.choice([*WRONG, [[0, True]], [[0]], [[1, 2, 3]], [[0, 2**70]], [[-5, 10]] * 2000,
                       "x" * 300])


def _structured(rng: random.Random, count: int) -> list[bytes]:
    """The handler's own commands with fields of the wrong types and ranges."""
    shapes = {"eval": ["expr", "timeout", "frame", "function", "keep"],
              "digest": ["keep", "ranges", "stats"], "release": ["keep"],
              "ping": ["rank"], "stacks": ["rank"], "collectives": ["rank"]}
    out = []
    for _ in range(count):
        command = rng.choice(list(shapes))
        body: dict[str, Any] = {"command": command}
        for name in rng.sample(shapes[command], rng.randrange(1, len(shapes[command]) + 1)):
            body[name] = _field(rng)
        if command == "eval" and rng.random() < 0.3:
            body["expr"] = rng.choice(["1 + 1", "model", "step", "while True: pass"])
            body.setdefault("timeout", 0.2)
        out.append(json.dumps(body).encode())
    return out


def _acts(line: bytes) -> bool:
    """Whether ``line`` is by chance a request that changes the rank: an attach for this
    rank would start its debugger (the fuzz tests the boundary, not the debugger)."""
    try:
        body = json.loads(line)
    except (ValueError, RecursionError):
        return False
    return (isinstance(body, dict) and body.get("command") == "attach"
            and body.get("rank", 0) == 0 and not isinstance(body.get("rank"), bool))


def _messages() -> list[bytes]:
    rng = random.Random(SEED)
    found = [*lines(SEED, COUNT, events=False, names=COMMANDS), *_structured(rng, 200),
             *_raw()]
    rng.shuffle(found)
    return [line for line in found if not _acts(line)]


@pytest.fixture
def job(tmp_path: Path) -> Iterator[tuple[Launch, Path]]:
    launch = start(tmp_path, ["--arm"], "raise_train.py", env={"RAISE_STEP": "0"})
    try:
        launch.event("job", 60)
        # Past the first steps' one-time allocations (gloo's buffers, autograd's): the
        # memory measured from here is the fuzz's (from step 3 it once read 72 MiB).
        wait_for("both ranks training", lambda: steps(tmp_path, 0) > 10
                 and steps(tmp_path, 1) > 10, 120, launch)
        yield launch, tmp_path
    finally:
        (tmp_path / "stop").touch()
        launch.close()


def _rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) << 10
    raise AssertionError("no VmRSS")


class _Conn:
    """One connection to the handler, reopened every ``PER_CONNECTION`` lines."""

    PER_CONNECTION = 50

    def __init__(self, path: str) -> None:
        self.path = path
        self.sock: socket.socket | None = None
        self.reader: Any = None
        self.sent = 0

    def exchange(self, line: bytes) -> tuple[dict[str, Any], dict[str, Any]]:
        """Send ``line`` then a ping; the next two replies."""
        if self.sock is None or self.sent % self.PER_CONNECTION == 0:
            self.close()
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.settimeout(ANSWER_S)
            self.sock.connect(self.path)
            self.reader = self.sock.makefile("rb")
        self.sent += 1
        self.sock.sendall(line + b"\n" + PING)
        first, second = self.reader.readline(), self.reader.readline()
        assert first and second, f"no answer to {line[:200]!r}"
        return json.loads(first), json.loads(second)

    def close(self) -> None:
        if self.sock is not None:
            self.reader.close()
            self.sock.close()
            self.sock = None


def test_every_malformed_line_gets_one_answer_and_the_rank_trains_on(
        job: tuple[Launch, Path]) -> None:
    launch, tmp = job
    entry = registry.read_rank(str(launch.job), 0)
    assert entry is not None and isinstance(entry.get("socket"), str), entry
    pid = int(entry["pid"])
    before_steps, before_rss = steps(tmp, 0), _rss(pid)
    messages = _messages()
    conn = _Conn(str(entry["socket"]))
    kinds: dict[str, int] = {}
    deadline = time.monotonic() + BUDGET_S
    try:
        for line in messages:
            assert time.monotonic() < deadline, f"the fuzz took over {BUDGET_S:g} s"
            answer, ping = conn.exchange(line)
            assert isinstance(answer.get("event"), str) and answer.get("rank") == 0, (
                line[:200], answer)
            assert ping.get("event") == "armed", (line[:200], answer, ping)
            kinds[answer["event"]] = kinds.get(answer["event"], 0) + 1
    finally:
        conn.close()
    after = wait_for("rank 0 to train on", lambda: (
        n if (n := steps(tmp, 0)) > before_steps + 5 else None), 60, launch)
    grown = _rss(pid) - before_rss
    print(f"handler fuzz: {len(messages)} malformed messages to rank 0's handler socket "
          f"(answers {kinds}); rank 0 trained on from step {before_steps} to {after}; "
          f"its memory grew {grown / (1 << 20):.1f} MiB")
    assert kinds.get("error", 0) > len(messages) * 0.8, kinds
    assert grown < 64 << 20, f"rank 0 grew {grown >> 20} MiB"
    err = launch.stderr()
    assert "Traceback" not in err and "RecursionError" not in err, err
    assert launch.proc.poll() is None

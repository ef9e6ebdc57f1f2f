"""The language server's commands with hostile arguments: every ``rankdebug.*`` command gets
seeded malformed arguments (wrong types, huge and deep values, rank specs that name a
billion ranks); each call is answered (a result or the ``{"error": ...}`` envelope, never
an LSP internal error), in bounded time, and the server still plans a normal command."""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import pytest
from pytest_lsp import LanguageClient

from .conftest import execute, initialize

COMMANDS = ["rankdebug.plan", "rankdebug.debugPlan", "rankdebug.launchJson",
            "rankdebug.checkRanks", "rankdebug.smoke"]
KEYS = ["uri", "position", "line", "text", "argv", "language", "ranks", "settings",
        "breakpoints", "arm", "spec", "allowArm", "worldSize"]
VALUES: list[Any] = [
    None, True, -1, 2**70, 1.5, "", "9" * 5000, "0-1000000000", "0-1048575", "x" * 100_000,
    "file:///nonexistent/\u0000.sh", "torchrun --nproc_per_node 2 train.py", [], [1, "a"],
    [2**40], {}, {"line": -5, "character": "x"}, {"a": {"b": {"c": [1] * 10}}},
    [{"rank": "x"}], [{"rank": 1, "local_rank": None}] * 3, ["torchrun", 7],
    {"workspace": 3}, [[[[[]]]]],
]
SEED = 31
CALLS = 160


def _args(rng: random.Random) -> list[Any]:
    shape = rng.randrange(6)
    if shape == 0:
        return []
    if shape == 1:
        return [rng.choice(VALUES)]
    body = {rng.choice(KEYS): rng.choice(VALUES) for _ in range(rng.randrange(1, 5))}
    return [body] if shape < 5 else [body, rng.choice(VALUES)]


@pytest.mark.asyncio
@pytest.mark.timeout(600)
async def test_every_command_answers_hostile_arguments(fresh_client: LanguageClient,
                                                       tmp_path: Path) -> None:
    await initialize(fresh_client, tmp_path)
    rng = random.Random(SEED)
    slowest = 0.0
    for n in range(CALLS):
        command = COMMANDS[n % len(COMMANDS)]
        args = _args(rng)
        started = time.monotonic()
        try:
            got = await execute(fresh_client, command, *args)
        except Exception as exc:  # an LSP error response: the server failed on it
            raise AssertionError(f"{command} {str(args)[:300]}: {exc}") from exc
        slowest = max(slowest, time.monotonic() - started)
        assert isinstance(got, dict), (command, str(args)[:300], got)
        if "error" in got:
            assert isinstance(got["error"].get("message"), str), got
            assert "Traceback" not in got["error"]["message"], got
    got = await execute(fresh_client, "rankdebug.checkRanks", {"spec": "1,3", "worldSize": 4})
    assert got == {"rankSpec": "1,3", "ranks": [1, 3], "arm": False}
    plan = await execute(fresh_client, "rankdebug.plan",
                         {"text": "torchrun --nproc_per_node 2 train.py"})
    assert plan["world_size"] == 2, plan
    print(f"language server: {CALLS} hostile command calls (seed {SEED}), each answered; "
          f"slowest {slowest:.2f} s")
    assert slowest < 20, slowest

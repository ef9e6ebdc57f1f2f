"""``rankdebug eval`` leaves nothing running or held in a training job, for real: an armed
torchrun job (gloo, CPU) whose ranks train (scripts/raise_train.py, nobody raises).

- code that runs past ``--timeout`` is stopped in every rank as the answer comes: a
  ``while True`` loop's counter stands still afterwards, and no evaluation thread is left;
  code inside a call that cannot be interrupted (``time.sleep``) is stopped when it
  returns: what follows the call never runs;
- a tensor's snapshot for compare is kept only as long as the compare: the CLI releases it;
  a value over the size bound (``RANKDEBUG_KEEP_MB``) is not copied in a running rank, and
  says why; a snapshot nobody releases goes after its time;
- through all of it, the ranks train on.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from launched import Launch, cli, cli_json, start, steps, wait_for

from rankdebug.runtime import registry
from rankdebug.runtime.wire import WireError, ask

pytestmark = pytest.mark.timeout(300)

KEEP_MB = 1


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Launch, Path]]:
    tmp = tmp_path_factory.mktemp("eval_stops")
    launch = start(tmp, ["--arm"], "raise_train.py",
                   env={"RAISE_STEP": "0", "RANKDEBUG_KEEP_MB": str(KEEP_MB)})
    try:
        launch.event("job", 60)
        wait_for("both ranks training", lambda: steps(tmp, 0) > 2 and steps(tmp, 1) > 2,
                 120, launch)
        yield launch, tmp
    finally:
        (tmp / "stop").touch()
        launch.close()


def _values(job: str, expr: str, timeout: str = "20") -> list[dict[str, Any]]:
    lines = cli_json("eval", job, "all", expr, "--timeout", timeout, timeout=120)
    return [line for line in lines if line["event"] != "compare"]


def _eval_threads(job: str) -> list[str]:
    got = _values(job, "sum(1 for t in __import__('threading')._active.values() "
                       "if t.name == 'rankdebug-handler-eval')")
    return [line["text"] for line in got]


def test_a_timed_out_eval_is_stopped_in_every_rank(job: tuple[Launch, Path]) -> None:
    launch, tmp = job
    job_id = str(launch.job)
    t0 = time.monotonic()
    spin = "import builtins\nbuiltins.rd_spins = 0\nwhile True:\n    builtins.rd_spins += 1"
    answers = _values(job_id, spin, timeout="2")
    assert time.monotonic() - t0 < 30
    for line in answers:
        assert line["event"] == "error", line
        assert line["message"] == "no result after 2 s; stopped it", line
    first = [line["text"] for line in _values(job_id, "__import__('builtins').rd_spins")]
    time.sleep(1.5)
    later = [line["text"] for line in _values(job_id, "__import__('builtins').rd_spins")]
    assert first == later and all(int(n) > 1000 for n in first), (first, later)
    assert _eval_threads(job_id) == ["1", "1"]  # the one asking

    sleepy = "import builtins, time\ntime.sleep(5)\nbuiltins.rd_after_sleep = 1"
    answers = _values(job_id, sleepy, timeout="1")
    for line in answers:
        assert line["message"].startswith("no result after 1 s; not stopped yet: it waits "
                                          "in a call that cannot be interrupted"), line
    wait_for("the sleeping evals to end", lambda: _eval_threads(job_id) == ["1", "1"], 60)
    after = _values(job_id, "hasattr(__import__('builtins'), 'rd_after_sleep')")
    assert [line["text"] for line in after] == ["False", "False"]
    before = steps(tmp, 0), steps(tmp, 1)
    wait_for("both ranks training on", lambda: steps(tmp, 0) > before[0] + 5
             and steps(tmp, 1) > before[1] + 5, 60, launch)
    assert "Traceback" not in launch.stderr(), launch.stderr()


def _socket(job: str, rank: int) -> str:
    entry = registry.read_rank(job, rank)
    assert entry is not None and isinstance(entry.get("socket"), str), entry
    return str(entry["socket"])


KEPT = "__import__('rankdebug.runtime.kept').runtime.kept"


def _kept(sock: str) -> tuple[int, int]:
    got = ask(sock, {"command": "eval", "expr": f"({KEPT}.count(), {KEPT}.held_bytes())"})
    count, size = json.loads(got["text"].replace("(", "[").replace(")", "]"))
    return int(count), int(size)


def test_snapshots_are_bounded_and_released(job: tuple[Launch, Path]) -> None:
    launch, tmp = job
    job_id = str(launch.job)
    # The CLI's compare releases what it made the ranks keep.
    out = cli("eval", job_id, "all", "model.head.weight * 1", "--json")
    assert out.returncode == 0, out.stderr
    assert all("summary" in json.loads(line) for line in out.stdout.splitlines()[:2])
    for rank in (0, 1):
        assert _kept(_socket(job_id, rank)) == (0, 0)

    sock = _socket(job_id, 0)
    small = ask(sock, {"command": "eval", "expr": "__import__('torch').ones(1 << 17)",
                       "keep": "small"})  # 512 KiB
    assert small["summary"]["numel"] == 1 << 17
    assert _kept(sock) == (1, 1 << 19)
    got = ask(sock, {"command": "digest", "keep": "small", "ranges": [[0, 3]]})
    assert got["ranges"][0]["values"] == [1.0, 1.0, 1.0]
    # Over the bound, in a running rank: nothing copied, and the digest says why.
    ask(sock, {"command": "eval", "expr": "__import__('torch').ones(1 << 19)", "keep": "big"})
    assert _kept(sock) == (2, 1 << 19)
    with pytest.raises(WireError, match=rf"larger than the {KEEP_MB} MiB a running rank keeps"):
        ask(sock, {"command": "digest", "keep": "big", "ranges": [[0, 3]]})
    for key in ("small", "big"):
        assert ask(sock, {"command": "release", "keep": key})["released"] is True
    assert _kept(sock) == (0, 0)
    with pytest.raises(WireError, match="no value kept under that key"):
        ask(sock, {"command": "digest", "keep": "small", "ranges": [[0, 3]]})
    # Kept and never released: gone after its time (1 s here), with no request to prune it.
    ask(sock, {"command": "eval", "expr": f"{KEPT}.__setattr__('KEEP_S', 1.0)"})
    ask(sock, {"command": "eval", "expr": "__import__('torch').ones(100)", "keep": "late"})
    assert _kept(sock)[0] == 1
    wait_for("the snapshot to go", lambda: _kept(sock) == (0, 0), 20)
    assert steps(tmp, 0) > 0 and launch.proc.poll() is None

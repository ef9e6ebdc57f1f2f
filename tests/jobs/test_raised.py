"""Ranks held at an uncaught exception, as ``rankdebug jobs`` and ``rankdebug stacks`` show
them (the registry's ``raised`` object, the handler's ``raised`` thread), without a job."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rankdebug.jobs.analysis import stacks as stk
from rankdebug.jobs.cli_jobs import render
from rankdebug.jobs.discover import discover
from rankdebug.runtime import registry

RAISED = {"exception": "ValueError", "message": "loss is nan", "file": "/p/model.py",
          "line": 88, "function": "forward"}


def test_jobs_list_a_raised_rank(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    registry.create_job("j1", {"pid": os.getpid(), "command": ["torchrun", "m.py"]})
    registry.write_rank("j1", {"rank": 0, "state": "running", "pid": os.getpid()})
    registry.write_rank("j1", {"rank": 3, "state": "raised", "pid": os.getpid(),
                               "raised": dict(RAISED, extra="dropped")})
    found = discover(gpus=False)
    job = next(j for j in found.jobs if j.id == "j1")
    ranks = {r.rank: r for r in job.ranks}
    assert ranks[0].raised is None
    assert (ranks[3].state, ranks[3].raised) == ("raised", RAISED)
    assert job.to_json()["ranks"][1]["raised"] == RAISED
    lines = render(found).splitlines()
    line = next(ln for ln in lines if "rank   3" in ln)
    assert line.endswith("raised ValueError at model.py:88")
    assert "raised" not in next(ln for ln in lines if "rank   0" in ln)


def test_stacks_mark_the_held_rank() -> None:
    def dump(raised: dict[str, object] | None, top: str) -> list[dict[str, object]]:
        return [{"thread_id": 1, "os_thread_id": 10, "thread_name": "MainThread",
                 "active": False, "raised": raised,
                 "frames": [{"name": top, "filename": "/p/model.py", "line": 88},
                            {"name": "main", "filename": "/p/train.py", "line": 5}]}]

    ranks = []
    for rank, (raised, top) in enumerate([(None, "forward"), (RAISED, "forward"),
                                          (None, "forward")]):
        rs = stk.RankStack(pid=10, rank=rank, via="handler")
        rs.threads = stk.parse_dump(dump(raised, top), 10)
        ranks.append(rs)
    groups = stk.group(ranks)
    held = next(g for g in groups if g.raised)
    assert [r.rank for r in held.ranks] == [1] and held.odd
    assert held.to_json()["raised"] == "ValueError"
    report = stk.report(ranks, groups, "j1", 0.1)
    assert report["odd"] == [1]
    assert report["ranks"][1]["threads"][0]["raised"] == RAISED
    text = stk.render(ranks, groups, "j1", 0.1)
    assert "[raised ValueError: held]" in text

"""The hang rule's decision past S (``rankdebug.hang_rule``), fed what a diagnosis saw: ranks
busy on a CPU that nobody waits for are working (loading data, a long call before the first
collective: seen in CI as three ranks in ``import torch`` for 10 s on a loaded machine), not
stuck; idle ranks that nothing names still are, and a named culprit always is."""

from __future__ import annotations

import json
import subprocess
import time
from typing import Any

import pytest

from rankdebug import hang_rule
from rankdebug.hang_rule import Diagnosis, HangRule


class _Still:
    def progressed(self) -> bool:
        return False

    def counted(self) -> bool:
        return True


def _said(found: Diagnosis) -> list[dict[str, Any]]:
    said: list[dict[str, Any]] = []
    rule = HangRule(0.05, "J", _Still(), lambda: False, said.append)
    rule.diagnosis = lambda job: found
    time.sleep(0.1)
    rule.step()
    return said


@pytest.mark.parametrize(("found", "hang"), [
    (Diagnosis(True, False, [], "ranks 0-2 stayed in train.py:16 (<module>), busy", True),
     False),
    (Diagnosis(True, False, [], "ranks 0-2 stayed in train.py:40 (step), blocked", False),
     True),
    (Diagnosis(True, False, [{"ranks": [2], "why": "rank 2 spins"}], "rank 2 spins", True),
     True),
    (Diagnosis(False, False, [], ""), False),
], ids=["busy-nobody-waits", "idle", "named", "unread"])
def test_past_s_the_rule_says_a_hang_only_where_one_is(found: Diagnosis, hang: bool) -> None:
    said = _said(found)
    assert [e["event"] for e in said] == (["hang"] if hang else [])


def test_working_is_read_from_the_ranks_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    """From the verb's ``rank`` lines (its real output shape: ``manner``, ``collective``)."""
    out: list[str] = []
    monkeypatch.setattr(hang_rule.subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(
        a, 0, "".join(out), ""))

    def seen(*lines: dict[str, Any]) -> Diagnosis:
        out[:] = [json.dumps(x) + "\n" for x in lines]
        return hang_rule.diagnose("J")

    busy = {"event": "rank", "reads": 3, "state": "running", "manner": "busy",
            "collective": None}
    assert seen(busy, dict(busy, rank=1)).working
    assert not seen(busy, dict(busy, manner="blocked")).working
    assert not seen(busy, dict(busy, collective="all_reduce")).working
    assert seen(busy, dict(busy, state="exited", manner=None)).working
    assert not seen().working

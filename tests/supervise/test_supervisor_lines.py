"""``supervise.job.Supervisor``'s loop, one item at a time (``_dispatch``), with no job
started: a line of ctl.sock is either answered with the channel's one error shape and
changes nothing, or goes to its handler; a fault in a handler is answered and the loop goes
on; a chosen rank that closes its connection before its script finished ends the job."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from supervise_fakes import FakeCtl, plan

from rankdebug.supervise.job import Supervisor


@pytest.fixture
def sup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Supervisor]:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))  # the registry, if written
    made = Supervisor(plan(chosen=[0]), "job-1", str(tmp_path / "job-1"), json_mode=True,
                      out=io.StringIO(), err=io.StringIO())
    made.ctl = FakeCtl()  # type: ignore[assignment]
    yield made
    made.ends.close()


def emitted(sup: Supervisor) -> list[str]:
    assert isinstance(sup.out, io.StringIO)
    return sup.out.getvalue().splitlines()


def replies(sup: Supervisor) -> list[tuple[int, dict[str, Any]]]:
    assert isinstance(sup.ctl, FakeCtl)
    return sup.ctl.replies


@pytest.mark.parametrize(("line", "says"), [
    ({"event": "started"}, "event started needs rank"),
    ({"event": "started", "rank": -1}, "event started: rank must be a rank number"),
    ({"event": "started", "rank": 0, "pid": "x"}, "event started: pid must be a process id"),
    ({"event": "shouted", "rank": 0}, "unknown event 'shouted'"),
    ({"rank": 0}, "a message is a JSON object with a command"),
])
def test_a_malformed_report_is_answered_and_changes_nothing(
        sup: Supervisor, line: dict[str, Any], says: str) -> None:
    sup._dispatch("msg", 3, line)
    [(cid, body)] = replies(sup)
    assert cid == 3
    assert list(body) == ["error"] and list(body["error"]) == ["message"]
    assert body["error"]["message"].startswith(says)
    assert sup.conns.by_cid == {}
    assert emitted(sup) == []


def test_a_line_that_is_no_json_object_is_answered_as_read(sup: Supervisor) -> None:
    sup._dispatch("bad", 2, {"error": {"message": "not JSON"}})
    assert replies(sup) == [(2, {"error": {"message": "not JSON"}})]


def test_a_report_goes_to_its_handler_unanswered(sup: Supervisor) -> None:
    sup._dispatch("msg", 1, {"event": "started", "rank": 0, "pid": 12, "local_rank": 0})
    assert replies(sup) == []
    assert sup.pid_of(0) == 12


def test_a_command_is_answered(sup: Supervisor) -> None:
    sup._dispatch("msg", 1, {"command": "ping"})
    sup._dispatch("msg", 1, {"command": "attach", "rank": 5})
    sup._dispatch("msg", 1, {"command": "stop"})
    assert replies(sup) == [(1, {"ok": True}),
                            (1, {"error": {"message": "the job has no rank 5 (yet)"}}),
                            (1, {"ok": True})]
    assert sup.stop_reason == "asked to stop"


def test_a_bad_stdin_command_is_an_error_event(sup: Supervisor) -> None:
    sup._dispatch("command", 0, {"command": "attach"})
    [line] = emitted(sup)
    assert '"event": "error"' in line and '"command": "attach"' in line
    assert "attach needs rank" in line


def test_a_fault_in_a_handler_is_answered_and_the_loop_goes_on(sup: Supervisor) -> None:
    def broken(*_: object) -> None:
        raise KeyError("oops")

    sup.reports.handlers["exit"] = broken
    sup._dispatch("msg", 4, {"event": "exit", "rank": 0})
    assert replies(sup) == [(4, {"error": {"message": "internal error: KeyError"}})]
    assert isinstance(sup.err, io.StringIO)
    assert "internal error on a msg message (the job goes on)" in sup.err.getvalue()


def test_a_chosen_rank_gone_before_its_script_finished_ends_the_job(sup: Supervisor) -> None:
    sup._dispatch("msg", 1, {"event": "started", "rank": 0, "pid": 12})
    sup._dispatch("eof", 1, None)
    assert sup.ends.abnormal_at is not None
    assert isinstance(sup.err, io.StringIO)
    assert "rank 0 ended before its script finished" in sup.err.getvalue()


def test_a_finished_rank_gone_is_no_failure(sup: Supervisor) -> None:
    sup._dispatch("msg", 1, {"event": "started", "rank": 0, "pid": 12})
    sup._dispatch("msg", 1, {"event": "exit", "rank": 0, "pid": 12})
    sup._dispatch("eof", 1, None)
    assert sup.ends.abnormal_at is None

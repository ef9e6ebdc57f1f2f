"""A fake of what the supervisor's peers ask of it (``supervise.hub.Hub``): what they
emit, say, record and answer is kept in lists, and posted calls run at once."""

from __future__ import annotations

import queue
from collections.abc import Callable
from typing import Any

from rankdebug.debugplan.job_env import JobRun


class FakeCtl:
    path = "/nonexistent/ctl.sock"

    def __init__(self) -> None:
        self.replies: list[tuple[int, dict[str, Any]]] = []

    def reply(self, cid: int, body: dict[str, Any]) -> None:
        self.replies.append((cid, body))


class FakeHub:
    def __init__(self, chosen: list[int] | None = None, json_mode: bool = True) -> None:
        self.job = "job-1"
        self.job_dir = "/nonexistent/job-1"
        self.json_mode = json_mode
        self.plan = plan(chosen)
        self.preset = None
        self.ctl = FakeCtl()
        self.events: queue.Queue[Any] = queue.Queue()
        self.stop_reason: str | None = None
        self.emitted: list[dict[str, Any]] = []
        self.said: list[str] = []
        self.recorded: list[tuple[int, dict[str, Any]]] = []

    def emit(self, event: dict[str, Any]) -> None:
        self.emitted.append(event)

    def say(self, text: str) -> None:
        self.said.append(text)

    def record(self, rank: int, fields: dict[str, Any]) -> None:
        self.recorded.append((rank, fields))

    def post(self, fn: Callable[[], None]) -> None:
        fn()


def plan(chosen: list[int] | None = None) -> JobRun:
    return JobRun(argv=["true"], env={}, cwd="/", launcher="torchrun", rank_spec="1",
                  chosen=chosen, host="127.0.0.1")

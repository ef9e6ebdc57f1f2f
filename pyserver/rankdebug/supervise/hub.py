"""What the supervisor's peer classes ask of it (``job.Supervisor``, the coordinator): the
job's name, folder and plan, its control socket and event queue, and the four ways to act
(``emit`` a ``--json`` event, ``say`` a line on stderr, ``record`` a rank's registry
fields, ``post`` a call to the loop thread). Each peer (``rank_reports``, ``endpoints``,
``nodes``, ``commands``, ``job_procs``) is handed the supervisor as a ``Hub``: none imports
``job.py`` (the layer test forbids the cycle), and a unit test hands them a fake."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from rankdebug.debugplan.job_env import JobRun
from rankdebug.supervise.ctl_server import CtlServer, Events


class Hub(Protocol):
    job: str
    job_dir: str
    json_mode: bool
    plan: JobRun
    preset: dict[str, dict[str, Any]] | None  # the client's breakpoints sent with the launch
    ctl: CtlServer
    events: Events  # the loop's queue: what other threads hand it
    stop_reason: str | None  # set: the loop ends the job, saying why

    def emit(self, event: dict[str, Any]) -> None: ...

    def say(self, text: str) -> None: ...

    def record(self, rank: int, fields: dict[str, Any]) -> None: ...

    def post(self, fn: Callable[[], None]) -> None: ...


def chosen(plan: JobRun, rank: int) -> bool:
    """Debugged from the start (not an armed rank told to attach later)."""
    return plan.chosen is not None and rank in plan.chosen

"""What the group layer knows of each chosen rank's debugger and of each group command in
flight, and what it needs of its job (``JobSide``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from rankdebug.debugplan.options import StopMode
from rankdebug.supervise.gates.gate import Gate

BLOCKED_AFTER_S = 1.0
# A rank asked to pause that has not stopped by then is read from outside: it may wait in
# native code (a collective whose peer is stopped), where no pause can reach it. A rank
# that is on a core (running library code, where justMyCode lets no pause land) is read
# again later, up to ACTIVE_READS times; then it is shown in what it runs.
ACTIVE_READS = 6
WAIT_READ_S = 0.25
HANDLER_ASK_S = 2.0  # the rank's handler answers in milliseconds, even while it waits
ASYNC_ASK_S = 0.3  # the same question where no collective shows on the stack
STEPS = {"over": "next", "in": "stepIn", "out": "stepOut"}
GROUP_COMMANDS = frozenset({"continue", "pause", "step", "run-to", "stop-mode"})

# A rank's registry fields for the collective it waits in (none: cleared).
NOT_WAITING: dict[str, Any] = {"collective": None, "seq": None, "group": None, "context": None}


class CommandError(ValueError):
    """A group command that cannot be carried out; the message says why."""


@dataclass
class RankDebug:
    """What the job knows of one chosen rank's debugger."""

    rank: int
    stopped: bool = False
    thread: int | None = None  # the thread that stopped: the one to step or continue
    reason: str | None = None
    where: dict[str, Any] | None = None
    pausing: bool = False  # the job has asked it to pause
    waiting: str | None = None  # shown paused while it waits in this (native code)
    numbered: dict[str, Any] = field(default_factory=dict)  # its seq and group, where known
    reads: int = 0  # stack reads since the job asked it to pause
    then: Callable[[], None] | None = None  # what to do at its next stop (run-to)
    resume: bool = False  # continued while shown waiting, its real stop on the way: go on
    stops: int = 0  # stops seen; the one whose place is being read is the last
    said: int = 0  # the last stop whose stopped event is out
    unsaid: bool = False  # continued before its stopped event was out: said after it


@dataclass
class Flight:
    """A group step or run-to whose ranks have not all stopped yet."""

    command: str
    ranks: list[int]
    left: set[int]  # not stopped yet
    unshown: set[int]  # stopped, its stopped event not out yet
    started: float = field(default_factory=time.monotonic)
    read: set[int] = field(default_factory=set)  # ranks whose stack was read for a collective
    undo: dict[int, Callable[[], None]] = field(default_factory=dict)  # run-to: restore


class JobSide(Protocol):
    """What the group layer needs of its supervisor."""

    job_dir: str  # the job's registry folder: each rank's handler socket is in it

    def emit_job(self, event: dict[str, Any]) -> None: ...  # a --json event of this job

    def post(self, fn: Callable[[], None]) -> None: ...  # run on the loop thread

    def pause_untraced(self, rank: int) -> bool: ...  # attach, paused; False: cannot

    def pid_of(self, rank: int) -> int | None: ...

    def record(self, rank: int, fields: dict[str, Any]) -> None: ...  # the registry entry


class Flights:
    """The group commands in flight: which ranks each still moves, and its ``arrived``
    event once every one has stopped and been said stopped."""

    def __init__(self, job: JobSide) -> None:
        self.job = job
        self.all: list[Flight] = []

    def add(self, flight: Flight) -> None:
        self.all.append(flight)

    def moving(self) -> set[int]:
        """Ranks a group command moves: they stop on their own."""
        return {r for f in self.all for r in f.left}

    def arrive(self, rank: int) -> bool:
        """``rank`` has stopped: true when a group command was moving it."""
        moving = False
        for flight in self.all:
            if rank in flight.left:
                moving = True
                flight.left.discard(rank)
                flight.unshown.add(rank)
        return moving

    def shown(self, rank: int) -> None:
        """``rank``'s stopped event is out: a group whose ranks all are has ``arrived``."""
        for flight in list(self.all):
            flight.unshown.discard(rank)
            if flight.left or flight.unshown:
                continue
            self.all.remove(flight)
            for undo in flight.undo.values():
                undo()
            self.job.emit_job({"event": "arrived", "command": flight.command,
                               "ranks": flight.ranks})


class Layer(Protocol):
    """What the group layer's parts (commands, late ranks) use of ``Together``."""

    gates: Mapping[int, Gate]
    job: JobSide
    mode: StopMode
    flights: Flights

    def rank(self, rank: int) -> RankDebug: ...

    def pause(self, rank: int) -> bool: ...  # ask it to pause; False: it cannot be

    def on_continued(self, rank: int) -> None: ...  # it runs again


def numbered(found: dict[str, Any]) -> dict[str, Any]:
    """A collective's ``seq``, ``group`` and ``context`` (who issued it: "DDP bucket, from
    backward"), those known (an event's optional fields)."""
    return {k: found[k] for k in ("seq", "group", "context") if found.get(k) is not None}


def waiting_fields(name: str, numbers: dict[str, Any]) -> dict[str, Any]:
    """A rank's registry fields while it waits in collective ``name``."""
    return {**NOT_WAITING, "collective": name, **numbers}


def label(group: list[int]) -> str:
    return ",".join(map(str, group))

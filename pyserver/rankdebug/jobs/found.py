"""A job and its ranks as discovery finds them (``jobs.discover``: the registry's and a
``/proc`` scan's), as ``rankdebug jobs --json`` prints them, and the text of a rank's
``raised`` and ``collective`` fields."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from typing import Any


@dataclass
class Rank:
    """One rank of a job, as ``rankdebug jobs --json`` prints it."""

    pid: int | None
    rank: int | None
    local_rank: int | None
    world_size: int | None
    host: str  # the machine (hostname)
    port: int | None = None  # a debug adapter's port, when the rank listens
    address: str | None = None  # the address that port listens on (127.0.0.1)
    state: str = "running"  # registry states: starting running raised listening attached exited
    proc_state: str | None = None  # running sleeping disk-wait stopped traced zombie
    cpu: float | None = None  # percent of one core (since the last sample, else lifetime)
    cpu_time: float | None = None  # seconds
    rss: int | None = None  # bytes
    threads: int | None = None
    gpu: list[dict[str, Any]] | None = None
    cuda_visible_devices: str | None = None
    command: list[str] = field(default_factory=list)
    cwd: str | None = None
    start_time: float | None = None  # seconds since the epoch
    armed: bool = False  # serves a control socket (``rankdebug launch --arm``)
    socket: str | None = None  # that socket's path
    # Held at an uncaught exception (``rankdebug.runtime.hold``): exception, message, file,
    # line, function. Kept once a debugger attaches (the state then says so).
    raised: dict[str, Any] | None = None
    # The collective a chosen rank waits in, as ``rankdebug launch`` found it (a rank of a group
    # step that did not arrive, or one shown paused while a peer is stopped): name, and where
    # PyTorch's records give them, seq and group.
    collective: dict[str, Any] | None = None
    # A Ray actor rank's role (``actor/rollout/ref``), once ``rankdebug launch`` heard it.
    role: str | None = None
    # Parallel coordinates from the job's own layout (``jobs.coords_value``): {"dp": 1, "tp": 3};
    # null while unknown (no mesh, no socket to ask, or not asked).
    coords: dict[str, int] | None = None


@dataclass
class Job:
    """One job, as ``rankdebug jobs --json`` prints it."""

    id: str
    source: str  # "registry" | "scan"
    host: str
    launcher: str | None
    launcher_pid: int | None
    command: list[str]
    cwd: str | None
    start_time: float | None
    world_size: int | None
    rendezvous: str | None = None  # MASTER_ADDR:MASTER_PORT
    run_id: str | None = None  # TORCHELASTIC_RUN_ID
    armed: bool = False  # started with ``rankdebug launch --arm``
    ranks: list[Rank] = field(default_factory=list)
    # A registry job's folder on this machine (its ``ctl.sock`` takes the job's commands):
    # null for a job the scan found, or one on another host.
    dir: str | None = None

    def to_json(self) -> dict[str, Any]:
        """As ``dataclasses.asdict`` gives it (the fields in order), without its deep copy
        of every value: the nested lists and objects are copied one level."""
        out = _plain(self, _JOB_FIELDS)
        out["ranks"] = [_plain(r, _RANK_FIELDS) for r in self.ranks]
        return out

    def rank(self, number: int) -> Rank | None:
        return next((r for r in self.ranks if r.rank == number), None)


_JOB_FIELDS = tuple(f.name for f in fields(Job))
_RANK_FIELDS = tuple(f.name for f in fields(Rank))


def _plain(obj: Job | Rank, names: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in names:
        value = getattr(obj, name)
        if isinstance(value, list):
            value = [dict(v) if isinstance(v, dict) else v for v in value]
        elif isinstance(value, dict):
            value = dict(value)
        out[name] = value
    return out


def rank_order(r: Rank) -> tuple[int, int]:
    """Ranks by number (those without one last), then by pid."""
    return (r.rank if r.rank is not None else 1 << 30, r.pid or 0)


def collective_text(collective: dict[str, Any]) -> str:
    """``all_reduce #6 (group 0)``; ``all_reduce`` where the number is not known."""
    text = str(collective.get("name"))
    if collective.get("seq") is not None:
        text += f" #{collective['seq']}"
    if collective.get("group") is not None:
        text += f" (group {collective['group']})"
    return text


def raised_text(raised: dict[str, Any]) -> str:
    """``raised ValueError at model.py:88``."""
    place = os.path.basename(str(raised.get("file") or "?"))
    line = raised.get("line")
    return f"raised {raised.get('exception')} at {place}" + (f":{line}" if line else "")

"""Ranks the terminal debugger names beyond the chosen ones: a rank of a ``launch --arm`` job
that was not chosen has no debugger until its handler starts one (what ``rankdebug attach
JOB RANK`` asks of it). ``rankdebug debug JOB --ranks SPEC`` and the prompt's ``attach SPEC``
start them side by side and give their gates to the session."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rankdebug.errors import BadInput
from rankdebug.jobs import attach, attach_many, job_coords
from rankdebug.jobs.discover import discover, find_job
from rankdebug.jobs.found import Rank

Gate = tuple[int, str, int]  # rank, host, port of its debug endpoint
START_S = 60.0  # a rank's debugger start (debugpy's import on a loaded node included)


class _Refused(Exception):
    pass


def recorded(entry: dict[str, Any]) -> dict[int, Gate]:
    """The endpoints the job's registry entry holds: its chosen ranks' gates and ranks
    attached before, whatever they do now (run, stopped, held at an exception)."""
    return {int(e["rank"]): (int(e["rank"]), str(e.get("host") or "127.0.0.1"), int(e["port"]))
            for e in entry.get("ranks") or []
            if isinstance(e.get("rank"), int) and isinstance(e.get("port"), int)
            and e.get("state") not in ("exited", "starting")}


def listen(ranks: Sequence[Rank], here: str) -> tuple[list[Gate], list[str]]:
    """Armed ranks told to start their debuggers (side by side), their endpoints; and why
    each other rank has none."""

    def one(rank: Rank) -> Gate:
        if rank.rank is None:
            raise _Refused("a process with no rank number")
        if rank.host not in ("", here):
            raise _Refused(f"rank {rank.rank} runs on {rank.host}: attach from there")
        if not rank.armed or rank.socket is None:
            raise _Refused(f"rank {rank.rank} was not chosen and the job is not armed "
                           "(`rankdebug launch --arm` gives every rank a debugger to start)")
        try:
            host, port = attach.armed_listen(rank.socket, START_S)
        except attach.AttachError as exc:
            raise _Refused(f"rank {rank.rank}: its debugger did not start: {exc}") from None
        return rank.rank, host, port

    outcomes = attach_many.run_all(list(ranks), one)
    gates = [o.result for o in outcomes if o.result is not None]
    refused = [str(o.error) for o in outcomes if o.result is None]
    return sorted(gates), refused


def pick(job_id: str, spec: str) -> tuple[list[Rank], str]:
    """The running ranks of ``job_id`` that ``spec`` names (numbers or coordinates), and this
    host's name. Raises BadInput for a spec the job cannot answer or a job gone."""
    found = discover(gpus=False)
    job = find_job(found.jobs, job_id)
    if job is None:
        raise BadInput(f"job {job_id} is gone")
    picked = [r for r in job_coords.pick(spec, job, found.host) if r.state != "exited"]
    if not picked:
        raise BadInput(f"{spec!r} names no running rank of job {job_id}")
    return picked, found.host


def gates(named: Sequence[Rank], have: dict[int, Gate], here: str
          ) -> tuple[list[Gate], list[str]]:
    """The named ranks' endpoints: those ``have`` (the registry's), the rest started now
    (``listen``); and why any rank has none."""
    started, refused = listen([r for r in named if r.rank not in have
                               and r.state != "exited"], here)
    return sorted(started + [have[r.rank] for r in named if r.rank in have]), refused

"""The registry's jobs (those ``rankdebug launch`` started, and ``adhoc-`` entries of ranks
that called ``rankdebug.breakpoint``) as found jobs, and what the scan saw of their ranks
merged into them."""

from __future__ import annotations

import os
from typing import Any

from rankdebug.jobs.coords_value import valid as valid_coords
from rankdebug.jobs.found import Job, Rank, rank_order


def registry_jobs(host: str, warnings: list[str]) -> tuple[list[Job], str | None]:
    """The registry's jobs, and its folder (made private and checked by the reading; None
    when it could not be read)."""
    from rankdebug.runtime import registry

    try:
        entries = registry.list_jobs()
    except OSError as exc:  # a RegistryError (a planted folder) is refused by the verb
        warnings.append(f"registry: {exc}")
        return [], None
    base = registry.location()
    jobs = []
    for entry in entries:
        job_host = str(entry.get("host") or host)
        pid = entry.get("pid")
        if job_host == host and isinstance(pid, int) and not registry.pid_alive(pid):
            continue  # a supervisor that died without cleaning up
        command = entry.get("command")
        ranks = []
        for r in entry.get("ranks", []):
            rpid = r.get("pid")
            # A rank on another node of the job (``launch --hosts``): its pid is that node's.
            rank_host = str(r.get("machine") or job_host)
            if isinstance(rpid, int) and rank_host == host and not registry.pid_alive(rpid):
                continue
            port = (_as_int(r.get("port")) if r.get("state") in ("listening", "attached")
                    else None)
            ranks.append(Rank(
                pid=rpid if isinstance(rpid, int) else None,
                rank=_as_int(r.get("rank")),
                local_rank=_as_int(r.get("local_rank")),
                world_size=_as_int(r.get("world_size")),
                host=rank_host,
                port=port,
                address=str(r.get("host") or "127.0.0.1") if port is not None else None,
                state=str(r.get("state") or "starting"),
                command=list(r.get("command") or []),
                cwd=r.get("cwd"),
                start_time=r.get("start_time"),
                armed=r.get("armed") is True and isinstance(r.get("socket"), str),
                socket=r.get("socket") if isinstance(r.get("socket"), str) else None,
                raised=_raised(r.get("raised")),
                collective=_collective(r),
                role=str(r["role"])[:40] if isinstance(r.get("role"), str) else None,
                coords=valid_coords(r.get("coords"), r.get("coord_dims")),
            ))
        jobs.append(Job(
            id=str(entry.get("job")),
            source="registry",
            host=job_host,
            launcher=entry.get("launcher"),
            launcher_pid=pid if isinstance(pid, int) else None,
            command=list(command) if isinstance(command, list) else [],
            cwd=entry.get("cwd"),
            start_time=entry.get("start_time"),
            world_size=_as_int(entry.get("world_size")),
            armed=entry.get("armed") is True,
            ranks=sorted(ranks, key=rank_order),
            dir=os.path.join(base, str(entry.get("job"))),
        ))
    return jobs, base


_RAISED_FIELDS = ("exception", "message", "file", "line", "function")


def _raised(value: Any) -> dict[str, Any] | None:
    """A registry entry's ``raised`` object, its known fields only."""
    if not isinstance(value, dict) or not isinstance(value.get("exception"), str):
        return None
    return {name: value.get(name) for name in _RAISED_FIELDS}


def _collective(entry: dict[str, Any]) -> dict[str, Any] | None:
    """A registry entry's collective (``supervise.together`` records it): {"name", "seq",
    "group"}, or None when the rank waits in none."""
    name = entry.get("collective")
    if entry.get("state") not in ("blocked", "paused") or not isinstance(name, str):
        return None
    group = entry.get("group")
    return {"name": name, "seq": _as_int(entry.get("seq")),
            "group": group if isinstance(group, str) else None}


def _as_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def merge(job: Job, seen: list[Rank]) -> None:
    """Put scanned ranks into a registry job: fill the registry's entries, or add them."""
    known_ranks: dict[int, Rank] = {}
    for r in job.ranks:
        if r.rank is not None:
            known_ranks.setdefault(r.rank, r)
    # A process whose variables hold no rank number (Lightning's copies: LOCAL_RANK only) is
    # the registry's rank of the same pid.
    known_pids = {r.pid: r for r in job.ranks if r.pid is not None}
    added = False
    for one in seen:
        if one.world_size is not None and job.world_size is None:
            job.world_size = one.world_size
        known = (known_ranks.get(one.rank) if one.rank is not None
                 else known_pids.get(one.pid) if one.pid is not None else None)
        if known is None:
            job.ranks.append(one)
            if one.rank is not None:
                known_ranks[one.rank] = one
            added = True
            continue
        _fill(known, one)
    if added:
        job.ranks.sort(key=rank_order)


def _fill(known: Rank, seen: Rank) -> None:
    """A registry entry completed by what the scan saw of its process."""
    if known.port is None and seen.port is not None:
        known.port, known.address, known.state = seen.port, seen.address, seen.state
    for name in ("local_rank", "world_size"):
        if getattr(known, name) is None:
            setattr(known, name, getattr(seen, name))
    # What the process itself shows wins over what the supervisor wrote ahead of it.
    for name in ("pid", "proc_state", "cpu", "cpu_time", "rss", "threads",
                 "cuda_visible_devices", "command", "cwd", "start_time"):
        setattr(known, name, getattr(seen, name))
    if known.state == "starting":
        known.state = "running"

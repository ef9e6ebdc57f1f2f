"""Finding running jobs: the registry's, and the ones a ``/proc`` scan finds on this machine
(``proc_scan``): grouped into jobs here.

Ranks are grouped into jobs by their launcher (the parent process) and their rendezvous
(``TORCHELASTIC_RUN_ID``, ``MASTER_ADDR:MASTER_PORT``, the Slurm step, the MPI job); ranks of
a job started by ``rankdebug launch`` (``RANKDEBUG_JOB`` in their environment) are merged
into that job's registry entry (``registry_jobs``). What is found (``Job``, ``Rank``) is
``jobs.found``'s.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rankdebug.jobs import gpu as gpumod
from rankdebug.jobs import procfs
from rankdebug.jobs.found import Job, Rank, collective_text, raised_text, rank_order
from rankdebug.jobs.proc_scan import (
    Proc,
    adapter_port,
    ancestors,
    env_launcher,
    hostname,
    launcher_name,
    rank_from,
    scan_processes,
    signature,
)
from rankdebug.jobs.registry_jobs import merge, registry_jobs

# Imported from here by the verbs that read found jobs (they live in ``jobs.found``).
__all__ = ["Job", "Rank", "collective_text", "raised_text"]

@dataclass
class Discovery:
    """Every job found, plus what the scan cost and what went wrong on the way."""

    jobs: list[Job]
    host: str
    time: float
    scan_ms: float
    processes: int
    warnings: list[str] = field(default_factory=list)
    cpu_sample: dict[int, tuple[float, float]] = field(default_factory=dict)
    # With --hosts: every host asked ({"host", "ssh", "scan_ms"} or {"host", "error"}).
    nodes: list[dict[str, Any]] = field(default_factory=list)
    # The registry's root folder, made private if missing (what an editor watches for
    # jobs coming and going); None when the registry was not read.
    registry: str | None = None

    def to_json(self) -> dict[str, Any]:
        out = {
            "host": self.host,
            "time": self.time,
            "scan_ms": self.scan_ms,
            "processes": self.processes,
            "jobs": [j.to_json() for j in self.jobs],
            "warnings": self.warnings,
            "registry": self.registry,
        }
        if self.nodes:
            out["nodes"] = self.nodes
        return out


def discover(*, registry: bool = True, gpus: bool = True,
             previous: Discovery | None = None, uid: int | None = None) -> Discovery:
    """Every job on this machine: the registry's (merged with what the scan sees of their
    ranks) and the scan's. ``previous``: an earlier result, so CPU is measured since then."""
    host = hostname()
    warnings: list[str] = []
    scan = scan_processes(uid)
    now_up = procfs.uptime()
    prev = previous.cpu_sample if previous is not None else None
    listed, root = registry_jobs(host, warnings) if registry else ([], None)
    by_id = {j.id: j for j in listed}

    adapter_ports: dict[tuple[Any, ...], tuple[str, int]] = {}
    for ad in scan.adapters:
        found = adapter_port(ad.argv)
        if found is not None and ad.vars is not None:
            adapter_ports[(signature(ad.env), ad.vars.source, ad.vars.rank)] = found

    moment = _Moment(host, now_up, prev, adapter_ports)
    groups: dict[tuple[Any, ...], list[Proc]] = {}
    seen: dict[str, list[Rank]] = {}
    for proc in scan.ranks:
        job_id = proc.env.get("RANKDEBUG_JOB")
        if job_id and job_id in by_id:
            seen.setdefault(job_id, []).append(moment.rank(proc))
            _rendezvous(by_id[job_id], proc.env)
            continue
        groups.setdefault((proc.status.ppid, signature(proc.env)), []).append(proc)
    for job_id, ranks in seen.items():
        merge(by_id[job_id], ranks)

    # A job rankdebug did not start, one of whose ranks called ``rankdebug.breakpoint``,
    # has a registry entry (``adhoc-…``) naming that rank's pid: the ranks found beside it
    # are that job's, not a second one.
    by_pid = {r.pid: j for j in listed for r in j.ranks if r.pid is not None}
    scan_jobs: list[Job] = []
    used: set[str] = set()
    for (ppid, _sig), procs in groups.items():
        owner = next((by_pid[p.pid] for p in procs if p.pid in by_pid), None)
        if owner is not None:
            merge(owner, [moment.rank(proc) for proc in procs])
            continue
        scan_jobs.append(_scan_job(ppid, procs, moment, used))

    jobs = listed + sorted(scan_jobs, key=lambda j: (j.start_time or 0.0, j.id))
    if gpus:
        _add_gpus(jobs, warnings)
    sample = {p.pid: (p.status.cpu_time, now_up) for p in scan.ranks}
    return Discovery(jobs, host, time.time(), round(scan.seconds * 1000, 2),
                     scan.looked_at, warnings, sample, registry=root)


def _set_port(rank: Rank, proc: Proc,
              adapter_ports: Mapping[tuple[Any, ...], tuple[str, int]]) -> None:
    """A debugpy adapter that carries this rank's variables listens for it."""
    if proc.vars is None:
        return
    found = adapter_ports.get((signature(proc.env), proc.vars.source, proc.vars.rank))
    if found is not None:
        rank.state = "listening"
        rank.address, rank.port = found


@dataclass(frozen=True)
class _Moment:
    """What one scan knows beside a process: the host, the uptime now, the previous CPU
    sample and the ports of the debug adapters found."""

    host: str
    now_up: float
    prev: Mapping[int, tuple[float, float]] | None
    adapter_ports: Mapping[tuple[Any, ...], tuple[str, int]]

    def rank(self, proc: Proc) -> Rank:
        rank = rank_from(proc, self.host, self.now_up, self.prev)
        _set_port(rank, proc, self.adapter_ports)
        return rank


def _scan_job(ppid: int, procs: list[Proc], moment: _Moment, used: set[str]) -> Job:
    first = procs[0]
    env = first.env
    host = moment.host
    ranks = sorted((moment.rank(proc) for proc in procs), key=rank_order)

    launcher_argv: list[str] = []
    launcher = None
    launcher_st = procfs.status(ppid) if ppid > 1 else None
    if launcher_st is not None and launcher_st.uid == first.status.uid:
        launcher_argv = procfs.argv(procfs.read(f"/proc/{ppid}/cmdline") or b"")
        launcher = launcher_name(launcher_argv)
    if launcher is None:
        launcher = env_launcher(env)
        if launcher_st is None or launcher_name(launcher_argv) is None:
            launcher_argv = []
    base = f"{ppid}@{host}" if ppid > 1 else f"{min(p.pid for p in procs)}@{host}"
    job_id = base
    n = 1
    while job_id in used:
        n += 1
        job_id = f"{base}.{n}"
    used.add(job_id)
    worlds = [r.world_size for r in ranks if r.world_size is not None]
    master = env.get("MASTER_ADDR")
    master_port = env.get("MASTER_PORT")
    start: float | None
    starts = [r.start_time for r in ranks if r.start_time is not None]
    if launcher_argv and launcher_st is not None:
        start = round(procfs.start_time(launcher_st.start_ticks), 3)
        cwd = procfs.cwd(ppid)
    else:
        start = min(starts) if starts else None
        cwd = ranks[0].cwd
    return Job(
        id=job_id,
        source="scan",
        host=host,
        launcher=launcher,
        launcher_pid=ppid if launcher_argv else None,
        command=launcher_argv or ranks[0].command,
        cwd=cwd,
        start_time=start,
        world_size=max(worlds) if worlds else None,
        rendezvous=f"{master}:{master_port}" if master and master_port else None,
        run_id=env.get("TORCHELASTIC_RUN_ID"),
        ranks=ranks,
    )


def _rendezvous(job: Job, env: dict[str, str]) -> None:
    """A registry job's rendezvous, from its ranks' variables: ``jobs --hosts`` joins the
    parts of one job on several hosts by it (each host's ``rankdebug launch`` its own)."""
    if job.rendezvous is None and env.get("MASTER_ADDR") and env.get("MASTER_PORT"):
        job.rendezvous = f"{env['MASTER_ADDR']}:{env['MASTER_PORT']}"
        job.run_id = env.get("TORCHELASTIC_RUN_ID")


def _add_gpus(jobs: list[Job], warnings: list[str]) -> None:
    if not any(r.pid for j in jobs for r in j.ranks):
        return
    try:
        usage = gpumod.usage()
    except gpumod.GPUError as exc:
        warnings.append(str(exc))
        return
    if usage is None:
        return
    for job in jobs:
        for rank in job.ranks:
            if rank.pid is not None:
                rank.gpu = usage.get(rank.pid, [])


def find_job(jobs: list[Job], text: str) -> Job | None:
    """The job ``text`` names: its id, a unique prefix of it, or its launcher's pid."""
    for job in jobs:
        if job.id == text:
            return job
    with contextlib.suppress(ValueError):
        pid = int(text)
        for named in (lambda j: j.launcher_pid == pid,
                      lambda j: any(r.pid == pid for r in j.ranks),
                      # the command the user started, above an inner launcher (deepspeed
                      # runs ``python -m deepspeed.launcher.launch``, whose child the ranks are)
                      lambda j: any(pid in ancestors(r.pid, {}, LAUNCHER_DEPTH)
                                    for r in j.ranks[:1] if r.pid is not None)):
            hits = [j for j in jobs if named(j)]
            if len(hits) == 1:
                return hits[0]
    hits = [j for j in jobs if j.id.startswith(text)]
    return hits[0] if len(hits) == 1 else None


LAUNCHER_DEPTH = 4  # how far above a job's ranks a pid may name the job


def rank_of_pid(jobs: list[Job], pid: int, host: str | None = None
                ) -> tuple[Job, Rank] | None:
    """The rank whose pid is ``pid``: one of ``host`` first (pid numbers of other hosts of a
    multi-node job can be the same as this machine's)."""
    found = [(job, rank) for job in jobs for rank in job.ranks if rank.pid == pid]
    here = [hit for hit in found if host is not None and hit[1].host == host]
    best = here or found
    return best[0] if best else None

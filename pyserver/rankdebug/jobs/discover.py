"""Finding running jobs: the registry's, and the ones a ``/proc`` scan finds on this machine.

A scan looks at every process once, cheaply, and keeps only the current user's Python
processes whose environment holds a rank variable (:data:`RANK_VARS`). In order, per process:

1. ``/proc/PID/cmdline`` (one read): is the first word a Python interpreter?
2. ``stat("/proc/PID")``: is it ours (a quick filter; ``status``'s real uid confirms it)?
3. ``/proc/PID/environ``: does it name a rank?
4. ``status``, ``stat``, ``cwd``: the details.

Processes started by a rank that inherit its variables (DataLoader workers, compile workers,
``multiprocessing`` children) are not ranks: a candidate below a candidate with the same rank
variables is dropped. A candidate above one with *different* variables is a launcher's agent
(``srun torchrun``: the agent has ``SLURM_PROCID``, its workers ``RANK``), not a rank.
debugpy adapters spawned by a rank carry its environment: they give that rank's ``port``.

Ranks are grouped into jobs by their launcher (the parent process) and their rendezvous
(``TORCHELASTIC_RUN_ID``, ``MASTER_ADDR:MASTER_PORT``, the Slurm step, the MPI job); ranks of
a job started by ``rankdebug launch`` (``RANKDEBUG_JOB`` in their environment) are merged
into that job's registry entry. What is found (``Job``, ``Rank``) is ``jobs.found``'s.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rankdebug import launcher_table
from rankdebug.jobs import gpu as gpumod
from rankdebug.jobs import procfs
from rankdebug.jobs.coords_value import valid as valid_coords
from rankdebug.jobs.found import Job, Rank, collective_text, raised_text, rank_order
from rankdebug.runtime import bootstrap

# Imported from here by the verbs that read found jobs (they live in ``jobs.found``).
__all__ = ["Job", "Rank", "collective_text", "raised_text"]

# (rank, local rank, world size) variable names, per launcher family, tried in order.
# From the one table of them (rankdebug.runtime.bootstrap); "A|B" means A, else B.
RANK_VARS: tuple[tuple[str, str, str], ...] = tuple(
    (names[0], names[1], names[2])
    for names in (triple.split("/") for triple in ",".join((
        bootstrap.TORCH_VARS, bootstrap.MPI_VARS, bootstrap.SLURM_VARS,
        bootstrap.MINDSPORE_VARS)).split(",")))
# Cheap test on the raw environ bytes before parsing it.
_ENV_NEEDLES = (b"RANK=", b"RANK_ID=", b"WORLD_SIZE=", b"SLURM_PROCID=")
# Environment variables naming a job's rendezvous, most specific first.
_SIGNATURE_VARS = (
    "RANKDEBUG_JOB",
    "TORCHELASTIC_RUN_ID",
    "MASTER_ADDR",
    "MASTER_PORT",
    "SLURM_JOB_ID",
    "SLURM_STEP_ID",
    "OMPI_MCA_ess_base_jobid",
    "PMIX_NAMESPACE",
)

# The variables a scan reads of a process's environment (``Proc.env`` holds only these): the
# rank variables, the rendezvous, and what names a launcher or the GPUs.
_ENV_READ = procfs.EnvFilter.of(
    {name for triple in RANK_VARS for names in triple for name in names.split("|")}
    | {"LOCAL_RANK", "WORLD_SIZE", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID", "RANK_ID",
       "CUDA_VISIBLE_DEVICES", *_SIGNATURE_VARS},
    prefixes=("OMPI_COMM_WORLD",))

# Launcher names as ``rankdebug plan`` spells them, from a launcher process's words.
# A launcher process's words (program, module, helper) → its name: launcher_table's.
_LAUNCHER_WORDS = launcher_table.PROCESS_WORDS


@dataclass
class RankVars:
    rank: int | None
    local_rank: int | None
    world_size: int | None
    source: str  # the variable that gave the rank ("RANK", "OMPI_COMM_WORLD_RANK", …)


def _int(text: str | None) -> int | None:
    if text is None:
        return None
    text = text.strip()
    return int(text) if text.isdigit() else None


def rank_vars(env: Mapping[str, str]) -> RankVars | None:
    """The rank a process's environment names, or None when it names none."""
    for rank_name, local_name, world_name in RANK_VARS:
        rank = _int(env.get(rank_name))
        if rank is None:
            continue
        local = bootstrap.first_number(env, local_name)
        if local is None:
            local = _int(env.get("LOCAL_RANK"))
        world = bootstrap.first_number(env, world_name)
        if world is None:
            world = _int(env.get("WORLD_SIZE"))
        return RankVars(rank, local, world, rank_name)
    local = _int(env.get("LOCAL_RANK"))
    world = _int(env.get("WORLD_SIZE"))
    if local is None and world is None:
        return None
    return RankVars(None, local, world, "LOCAL_RANK" if local is not None else "WORLD_SIZE")


def signature(env: Mapping[str, str]) -> tuple[str, ...]:
    """What names a process's job in its environment (rendezvous, run id, Slurm step …)."""
    return tuple(env.get(name, "") for name in _SIGNATURE_VARS)


@dataclass
class Proc:
    """A process found by the scan."""

    pid: int
    argv: list[str]
    env: dict[str, str]  # the variables the scan reads (``_ENV_READ``), not all of them
    status: procfs.Status
    vars: RankVars | None = None


@dataclass
class Scan:
    """What one pass over /proc found (before grouping into jobs)."""

    ranks: list[Proc]
    adapters: list[Proc]
    parents: dict[int, int]  # pid -> ppid for the processes looked at closely
    looked_at: int  # processes in /proc
    seconds: float


def _is_adapter(argv: list[str]) -> bool:
    text = " ".join(argv[:3])
    return ("debugpy/adapter" in text or "debugpy\\adapter" in text
            or "debugpy.adapter" in text or "rankdebug.adapter.main" in text)


def _is_rankdebug(argv: list[str]) -> bool:
    """rankdebug's own processes (CLI, server), whatever their environment says."""
    if len(argv) > 2 and argv[1] == "-m" and argv[2].split(".")[0] == "rankdebug":
        return True
    return len(argv) > 1 and os.path.basename(argv[1]) == "rankdebug"


def scan_processes(uid: int | None = None) -> Scan:
    """One pass over /proc: this user's Python processes that carry rank variables."""
    t0 = time.perf_counter()
    me = os.getpid()
    uid = os.getuid() if uid is None else uid
    candidates: list[Proc] = []
    adapters: list[Proc] = []
    all_pids = procfs.pids()
    for pid in all_pids:
        if pid == me:
            continue
        cmdline = procfs.read_head(f"/proc/{pid}/cmdline")
        if not cmdline:
            continue  # kernel threads, zombies, vanished
        # A process that rewrote its title (no NUL between words) may still be Python.
        if not procfs.is_python_argv0(cmdline) and (
                b"\0" in cmdline.rstrip(b"\0") or not procfs.exe_is_python(pid)):
            continue
        try:
            if os.stat(f"/proc/{pid}").st_uid != uid:
                continue
        except OSError:
            continue
        env_bytes = procfs.read(f"/proc/{pid}/environ")
        if not env_bytes or not any(n in env_bytes for n in _ENV_NEEDLES):
            continue
        env = procfs.parse_environ(env_bytes, _ENV_READ)
        found = rank_vars(env)
        if found is None:
            continue
        st = procfs.status(pid)
        if st is None or st.uid != uid or st.euid != uid or st.state in ("Z", "X"):
            continue
        # The first read got all of it unless it filled the 4 KiB it asked for.
        full = (cmdline if len(cmdline) < 4096
                else procfs.read(f"/proc/{pid}/cmdline") or cmdline)
        proc = Proc(pid, procfs.argv(full), env, st, found)
        if _is_adapter(proc.argv):
            adapters.append(proc)
        elif not _is_rankdebug(proc.argv):
            candidates.append(proc)
    parents = {p.pid: p.status.ppid for p in candidates}
    ranks = _drop_helpers(candidates, parents)
    return Scan(ranks, adapters, parents, len(all_pids), time.perf_counter() - t0)


def _ancestors(pid: int, parents: dict[int, int], depth: int = 12) -> list[int]:
    out = []
    while depth > 0 and pid > 1:
        parent = parents.get(pid)
        if parent is None:
            parent = procfs.ppid(pid)
            if parent is None:
                break
            parents[pid] = parent
        out.append(parent)
        pid = parent
        depth -= 1
    return out


def _same_rank(a: Proc, b: Proc) -> bool:
    return (a.vars is not None and b.vars is not None
            and (a.vars.source, a.vars.rank, a.vars.local_rank)
            == (b.vars.source, b.vars.rank, b.vars.local_rank)
            and signature(a.env) == signature(b.env))


def _drop_helpers(cands: list[Proc], parents: dict[int, int]) -> list[Proc]:
    by_pid = {p.pid: p for p in cands}
    drop: set[int] = set()
    for proc in cands:
        for anc in _ancestors(proc.pid, parents):
            above = by_pid.get(anc)
            if above is None:
                continue
            if _same_rank(proc, above):
                drop.add(proc.pid)  # a worker of a rank
            else:
                drop.add(anc)  # a launcher's agent carrying its own rank variables
            break
    return [p for p in cands if p.pid not in drop]


# --- grouping ---------------------------------------------------------------------------


def launcher_name(argv: list[str]) -> str | None:
    """The launcher a process is, from its words (``torchrun``, ``mpirun`` …), or None."""
    if not argv:
        return None
    if not procfs.is_python_argv0(argv[0].encode()):
        first = os.path.basename(argv[0]).split(":")[0].split()
        return _LAUNCHER_WORDS.get(first[0]) if first else None
    rest = argv[1:]
    i = 0
    while i < len(rest):
        word = rest[i]
        if word == "-m":
            return _LAUNCHER_WORDS.get(rest[i + 1]) if i + 1 < len(rest) else None
        if word == "-c":
            return None
        if word in ("-X", "-W", "-Q"):
            i += 2
            continue
        if word.startswith("-"):
            i += 1
            continue
        return _LAUNCHER_WORDS.get(os.path.basename(word))
    return None


def _env_launcher(env: Mapping[str, str]) -> str:
    if "TORCHELASTIC_RUN_ID" in env:
        return "torchrun"
    if any(k.startswith("OMPI_COMM_WORLD") or k in ("PMI_RANK", "PMIX_RANK") for k in env):
        return "mpirun"
    if "SLURM_PROCID" in env:
        return "srun"
    if "RANK_ID" in env:
        return "msrun"
    return "other"


def _hostname() -> str:
    return socket.gethostname()


def _cpu_percent(pid: int, st: procfs.Status, now_up: float,
                 prev: Mapping[int, tuple[float, float]] | None) -> float:
    if prev and pid in prev:
        cpu0, t0 = prev[pid]
        dt = now_up - t0
        if dt > 0:
            return round(100.0 * max(0.0, st.cpu_time - cpu0) / dt, 1)
    alive = now_up - st.start_ticks / procfs.CLK_TCK
    return round(100.0 * st.cpu_time / alive, 1) if alive > 0 else 0.0


def _rank_from(proc: Proc, host: str, now_up: float,
               prev: Mapping[int, tuple[float, float]] | None) -> Rank:
    st = proc.status
    v = proc.vars or RankVars(None, None, None, "")
    return Rank(
        pid=proc.pid,
        rank=v.rank,
        local_rank=v.local_rank,
        world_size=v.world_size,
        host=host,
        state="running",
        proc_state=procfs.PROC_STATES.get(st.state, st.state),
        cpu=_cpu_percent(proc.pid, st, now_up, prev),
        cpu_time=round(st.cpu_time, 2),
        rss=st.rss,
        threads=st.threads,
        cuda_visible_devices=proc.env.get("CUDA_VISIBLE_DEVICES"),
        command=proc.argv,
        cwd=procfs.cwd(proc.pid),
        start_time=round(procfs.start_time(st.start_ticks), 3),
    )


def _adapter_port(argv: list[str]) -> tuple[str, int] | None:
    host, port = "127.0.0.1", None
    for i, word in enumerate(argv[:-1]):
        if word == "--port":
            port = _int(argv[i + 1])
        elif word == "--host":
            host = argv[i + 1]
    if port is None or port == 0:
        return None
    return host, port


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
    host = _hostname()
    warnings: list[str] = []
    scan = scan_processes(uid)
    now_up = procfs.uptime()
    prev = previous.cpu_sample if previous is not None else None
    registry_jobs, root = _registry_jobs(host, warnings) if registry else ([], None)
    by_id = {j.id: j for j in registry_jobs}

    adapter_ports: dict[tuple[Any, ...], tuple[str, int]] = {}
    for ad in scan.adapters:
        found = _adapter_port(ad.argv)
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
        _merge(by_id[job_id], ranks)

    # A job rankdebug did not start, one of whose ranks called ``rankdebug.breakpoint``,
    # has a registry entry (``adhoc-…``) naming that rank's pid: the ranks found beside it
    # are that job's, not a second one.
    by_pid = {r.pid: j for j in registry_jobs for r in j.ranks if r.pid is not None}
    scan_jobs: list[Job] = []
    used: set[str] = set()
    for (ppid, _sig), procs in groups.items():
        owner = next((by_pid[p.pid] for p in procs if p.pid in by_pid), None)
        if owner is not None:
            _merge(owner, [moment.rank(proc) for proc in procs])
            continue
        scan_jobs.append(_scan_job(ppid, procs, moment, used))

    jobs = registry_jobs + sorted(scan_jobs, key=lambda j: (j.start_time or 0.0, j.id))
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
        rank = _rank_from(proc, self.host, self.now_up, self.prev)
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
        launcher = _env_launcher(env)
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


def _registry_jobs(host: str, warnings: list[str]) -> tuple[list[Job], str | None]:
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


def _rendezvous(job: Job, env: dict[str, str]) -> None:
    """A registry job's rendezvous, from its ranks' variables: ``jobs --hosts`` joins the
    parts of one job on several hosts by it (each host's ``rankdebug launch`` its own)."""
    if job.rendezvous is None and env.get("MASTER_ADDR") and env.get("MASTER_PORT"):
        job.rendezvous = f"{env['MASTER_ADDR']}:{env['MASTER_PORT']}"
        job.run_id = env.get("TORCHELASTIC_RUN_ID")


def _merge(job: Job, seen: list[Rank]) -> None:
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
                      lambda j: any(pid in _ancestors(r.pid, {}, LAUNCHER_DEPTH)
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

"""The ``/proc`` scan for ranks (``discover`` groups what it finds into jobs).

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
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass

from rankdebug import launcher_table
from rankdebug.jobs import procfs
from rankdebug.jobs.found import Rank
from rankdebug.runtime import bootstrap

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


def ancestors(pid: int, parents: dict[int, int], depth: int = 12) -> list[int]:
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
        for anc in ancestors(proc.pid, parents):
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


def env_launcher(env: Mapping[str, str]) -> str:
    if "TORCHELASTIC_RUN_ID" in env:
        return "torchrun"
    if any(k.startswith("OMPI_COMM_WORLD") or k in ("PMI_RANK", "PMIX_RANK") for k in env):
        return "mpirun"
    if "SLURM_PROCID" in env:
        return "srun"
    if "RANK_ID" in env:
        return "msrun"
    return "other"


def hostname() -> str:
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


def rank_from(proc: Proc, host: str, now_up: float,
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


def adapter_port(argv: list[str]) -> tuple[str, int] | None:
    host, port = "127.0.0.1", None
    for i, word in enumerate(argv[:-1]):
        if word == "--port":
            port = _int(argv[i + 1])
        elif word == "--host":
            host = argv[i + 1]
    if port is None or port == 0:
        return None
    return host, port

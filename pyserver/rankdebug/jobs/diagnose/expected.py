"""Which ranks a job should have on this node, to tell a rank that exited from one that was
never here: torchrun (and the launchers built on it) and MPI tell each rank how many ranks
its node runs (``LOCAL_WORLD_SIZE``, ``OMPI_COMM_WORLD_LOCAL_SIZE``); the node's ranks are
numbered from one base, so a local rank no process holds is a rank that has ended.
"""

from __future__ import annotations

from rankdebug.jobs import procfs
from rankdebug.jobs.discover import Job

LOCAL_SIZE_VARS = ("LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS")
MAX_LOCAL = 4096


def _local_size(pid: int) -> int | None:
    env = procfs.environ(pid) or {}
    for name in LOCAL_SIZE_VARS:
        text = env.get(name, "").strip()
        if text.isdigit() and 0 < int(text) <= MAX_LOCAL:
            return int(text)
    return None


def gone_here(job: Job, host: str) -> list[int]:
    """Ranks this node started that no process holds now."""
    mine = [r for r in job.ranks if r.host == host and r.pid is not None
            and r.rank is not None and r.local_rank is not None]
    if not mine:
        return []
    bases = {r.rank - r.local_rank for r in mine if r.rank is not None and r.local_rank is not None}
    size = next((n for n in map(_local_size, (r.pid for r in mine if r.pid)) if n), None)
    if len(bases) != 1 or size is None:
        return []
    base = bases.pop()
    have = {r.local_rank for r in mine}
    return [base + local for local in range(size) if local not in have
            and (job.world_size is None or base + local < job.world_size)]

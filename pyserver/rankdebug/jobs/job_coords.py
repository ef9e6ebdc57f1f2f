"""Ranks' parallel coordinates (``{"dp": 1, "tp": 3}``), as the running job lays them out.

A rank that serves rankdebug's handler reads them from its own DeviceMesh or Megatron's
``parallel_state`` (``runtime.coords``) and records them in its registry entry once the job
has laid its ranks out, unasked: ``rankdebug jobs`` only reads the registry (asking each of
1,024 ranks on every refresh would cost more than the rest of the scan). A selector of a
verb (``resolve``) also asks the job's ranks that have recorded none yet, all at once, each
for at most ``ASK_S`` (a rank that holds the GIL in native code keeps null). Ranks of a job
rankdebug did not start have coordinates only once its handler is in them.
"""

from __future__ import annotations

from collections.abc import Iterable

from rankdebug.jobs.coords_value import text, valid
from rankdebug.jobs.discover import Job, Rank

__all__ = ["fill", "pick", "resolve", "table", "text", "valid"]

ASK_S = 1.0
def fill(jobs: Iterable[Job], host: str, timeout: float = ASK_S) -> None:
    """Ask every rank of ``jobs`` on ``host`` that serves a control socket and has no
    coordinates yet; set those that answer."""
    from rankdebug.runtime.wire import WireError, ask_timed

    asked = [r for job in jobs for r in job.ranks
             if r.coords is None and r.socket is not None and r.host == host
             and r.state != "exited"]
    if not asked:
        return
    replies = ask_timed([str(r.socket) for r in asked], {"command": "coords"}, timeout=timeout)
    for rank, (reply, _) in zip(asked, replies, strict=True):
        if not isinstance(reply, WireError):
            rank.coords = valid(reply.get("coords"))


def table(ranks: Iterable[Rank]) -> dict[int, dict[str, int]]:
    """rank -> coordinates, for the ranks that have them (what ``ranks.resolve`` reads)."""
    return {r.rank: dict(r.coords) for r in ranks if r.rank is not None and r.coords}


def resolve(text: str, job: Job, host: str) -> str:
    """A RANKS argument of a verb as a plain rank spec: a selector (``tp=0``, ``pp=last``)
    resolved against the coordinates the job's ranks report (those on ``host`` asked now
    where they have recorded none), anything else as written. Raises ``ranks.RanksError``
    (one line with the column) for a selector this job cannot answer."""
    from rankdebug import ranks

    if not ranks.is_selector(text):
        return text
    try:
        ranks.parse_selector(text)  # its syntax errors first, before any rank is asked
        fill([job], host)
        return ranks.resolve(text, job.world_size, table(job.ranks),
                             hint=f"no rank of job {job.id} reports a device mesh or "
                                  "Megatron's parallel_state (a job started by `rankdebug "
                                  "launch` reports them, or one whose ranks serve rankdebug's "
                                  "handler); give rank numbers instead (e.g. 0-3)")
    except ranks.RanksError as exc:
        raise placed(exc, text) from None


def placed(exc: Exception, text: str) -> Exception:
    """A RanksError whose message says where in ``text`` it is (the verbs print the
    message alone)."""
    from rankdebug import ranks

    if not isinstance(exc, ranks.RanksError) or exc.column is None:
        return exc
    return ranks.RanksError(f"{exc.message} (column {exc.column} of {text!r})", exc.line,
                            exc.column)


def pick(text: str, job: Job, host: str) -> list[Rank]:
    """The ranks of ``job`` that a RANKS argument names (rank numbers, ``localN``, ``all``
    or a selector; see ``resolve``); raises ``ranks.RanksError`` for a bad one or one that
    names no rank the job has."""
    from rankdebug import ranks

    spec = resolve(text, job, host)
    ranks.items(spec)  # raises for a malformed spec
    picked = [r for r in job.ranks
              if r.rank is not None and ranks.chosen(spec, r.rank, r.local_rank)]
    if not picked:
        raise ranks.RanksError(f"--ranks: job {job.id} has no rank matching {text!r}")
    return picked

"""The diagnosis as JSON lines (``--json``) or as a short text a person reads in seconds.

JSON, one object a line, in this order: ``class`` (largest first), ``rank`` (one per rank:
what was seen of it, and how), ``collectives`` (per process group, where its ranks are),
``culprit`` (one per finding) or ``healthy``, and ``done`` last.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from rankdebug.jobs.analysis.collective_check import _position
from rankdebug.jobs.diagnose.classes import Class
from rankdebug.jobs.diagnose.findings import Verdict
from rankdebug.jobs.diagnose.seen import Seen
from rankdebug.jobs.discover import collective_text
from rankdebug.ranks import label


def unread(seen: list[Seen]) -> list[dict[str, Any]]:
    """Every rank no read reached (with ``ranks_read``, every rank of the job once)."""
    return [{"rank": s.rank, "reason": s.reason or s.state} for s in seen if s.reads == 0]


def collectives(seen: list[Seen]) -> list[dict[str, Any]]:
    """Per process group a handler named: each rank's place in it at the last read, as
    ``collective_check`` reads it (the collective it waits in or the recorder has open, else
    the number of the last it issued), ranks alike together."""
    out: dict[str, dict[str, Any]] = {}
    for s in sorted(seen, key=lambda s: (s.rank is None, s.rank or 0)):
        state = s.collectives
        groups = (state or {}).get("groups")
        if s.rank is None or state is None or not isinstance(groups, dict):
            continue
        for name, info in groups.items():
            if not isinstance(info, dict):
                continue
            entry = out.setdefault(str(name), {"event": "collectives", "group": str(name),
                                               "desc": info.get("desc"), "positions": []})
            at, context = _position(state, name)
            slot = next((p for p in entry["positions"]
                         if (p["op"], p["seq"]) == (at.op, at.seq)), None)
            if slot is None:
                slot = {"ranks": [], "op": at.op, "seq": at.seq, "context": context}
                entry["positions"].append(slot)
            slot["ranks"].append(s.rank)
    for entry in out.values():
        entry["positions"].sort(key=lambda p: (-len(p["ranks"]), p["ranks"][0]))
    return [out[name] for name in sorted(out, key=lambda n: (len(n), n))]


def lines(cls: list[Class], seen: list[Seen], verdict: Verdict) -> list[dict[str, Any]]:
    """Every line but ``done``."""
    out = [c.to_json() for c in cls]
    # A rank nothing was seen of (not found on this host) has no line of its own: its class
    # and ``done``'s ranks_unread say it (a world size of thousands would be as many lines).
    out += [s.to_json() for s in sorted(seen, key=lambda s: (s.rank is None, s.rank or 0))
            if s.pid is not None or s.state == "exited"]
    out += collectives(seen)
    out += [f.to_json() for f in verdict.findings]
    if verdict.healthy is not None:
        out.append({"event": "healthy", "why": verdict.healthy})
    return out


def done(seconds: float, seen: list[Seen]) -> dict[str, Any]:
    return {"event": "done", "seconds": round(seconds, 3),
            "ranks_read": sum(1 for s in seen if s.reads > 0),
            "ranks_unread": unread(seen)}


def _place(c: Class) -> str:
    w = c.where
    return f"{os.path.basename(w.file)}:{w.line} {w.name}" if w is not None else ""


def _what(c: Class) -> str:
    if c.collective:
        return collective_text({"name": c.collective.get("op"), "seq": c.collective.get("seq"),
                                "group": c.collective.get("group")})
    if c.state == "raised":
        return str((c.first.raised or {}).get("exception") or "")
    if c.state == "stuck" and c.first.manner:
        return {"busy": "busy", "blocked": "blocked", "waking": "waking"}.get(
            c.first.manner, "")
    return ""


@dataclass
class Head:
    """The text report's first line: the job, the time it all took, the reads taken over
    how long."""

    job: str
    seconds: float
    reads: int
    watched: float


def text(head: Head, cls: list[Class], seen: list[Seen], verdict: Verdict) -> str:
    total = len(seen)
    read = sum(1 for s in seen if s.reads > 0)
    out = [f"job {head.job}: {read} of {total} ranks read in {head.seconds:.1f} s "
           f"({head.reads} reads over {head.watched:.1f} s)", ""]
    for f in verdict.findings:
        out.append(f"culprit: {f.why}")
        if f.where is not None:
            out.append(f"    at {f.where.file}:{f.where.line} in {f.where.name}")
    if verdict.healthy is not None:
        out.append(f"healthy: {verdict.healthy}")
    out.append("")
    who = [label(c.ranks) if c.ranks else "?" for c in cls]
    width = max((len(w) for w in who), default=0)
    what = [_what(c) for c in cls]
    wide = max((len(w) for w in what), default=0)
    for c, w, x in zip(cls, who, what, strict=True):
        out.append(f"  {w.ljust(width)}  {c.state:<8} {x.ljust(wide)}  {_place(c)}".rstrip())
    gone = [u for u in unread(seen) if u["rank"] is not None]
    if gone:
        out.append("")
        out.extend(f"  rank {u['rank']}: {u['reason']}" for u in gone)
    return "\n".join(out) + "\n"

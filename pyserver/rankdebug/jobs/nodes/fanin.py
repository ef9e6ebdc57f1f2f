"""One node's answer for its ranks, and this machine's merge of the nodes' answers (the
fan-in of LLNL STAT over MRNet: each node reduces its own ranks, the front end merges one
answer per node).

A node's ``stacks`` answer (``rankdebug stacks JOB --json --node-answer``, asked of every
``--hosts`` host) holds each distinct stack of its ranks once, a *class* (every thread's
name, frames, state, and the rank's collective), and per rank only a row: number, pid, its
class, its threads' ids, how long it took, how it was read. Here the classes become shared
``Thread`` frames, so that grouping, the merged tree and the frames' JSON are worked out
once per class, not once per rank (``stacks.group``, ``stack_tree.merge`` and
``stacks.report`` cache by the frames list). A node's ``eval`` answer is its ranks' results
grouped into value classes (what ``compare`` groups exactly), each class with its ranks.
"""

from __future__ import annotations

import json
from typing import Any

from rankdebug.jobs.analysis.stacks import Frame, RankStack, Thread

FORMAT = 1  # the answers' version: a node of another rankdebug answers per rank instead


def _thread_shape(t: Thread) -> dict[str, Any]:
    return {"name": t.name, "main": t.main, "active": t.active, "owns_gil": t.owns_gil,
            "raised": t.raised, "frames": [[f.name, f.file, f.line] for f in t.frames]}


def stacks_answer(stacks: list[RankStack], job: str | None, host: str | None,
                  seconds: float) -> dict[str, Any]:
    """A node's ranks as classes and rows (the module's docstring)."""
    index: dict[str, int] = {}
    classes: list[dict[str, Any]] = []
    rows: list[list[Any]] = []
    errors: list[dict[str, Any]] = []
    for rs in stacks:
        if rs.error is not None:
            errors.append({"rank": rs.rank, "pid": rs.pid, "error": rs.error,
                           "seconds": rs.seconds, "via": rs.via})
            continue
        shape = {"threads": [_thread_shape(t) for t in rs.threads],
                 "collective": rs.collective, "collectives": rs.collectives}
        key = json.dumps(shape, sort_keys=True)
        at = index.get(key)
        if at is None:
            at = index[key] = len(classes)
            classes.append(shape)
        rows.append([rs.rank, rs.pid, at, rs.seconds, rs.via,
                     [[t.thread_id, t.os_thread_id] for t in rs.threads]])
    return {"fanin": FORMAT, "job": job, "host": host, "seconds": round(seconds, 3),
            "classes": classes, "ranks": rows, "errors": errors}


def _threads(shape: dict[str, Any]) -> list[Thread]:
    return [Thread(name=str(t.get("name") or ""), thread_id=None, os_thread_id=None,
                   main=t.get("main") is True, active=t.get("active") is True,
                   owns_gil=t.get("owns_gil") is True,
                   frames=[Frame(str(f[0]), str(f[1]), int(f[2])) for f in t.get("frames")
                           or [] if isinstance(f, list) and len(f) == 3],
                   raised=t.get("raised") if isinstance(t.get("raised"), dict) else None)
            for t in shape.get("threads") or [] if isinstance(t, dict)]


def stacks_of_answer(answer: dict[str, Any], host: str) -> list[RankStack]:
    """The ranks of a node's answer, each thread's frames shared with its class's."""
    classes = [(_threads(c), c.get("collective"), c.get("collectives"))
               for c in answer.get("classes") or [] if isinstance(c, dict)]
    out: list[RankStack] = []
    for row in answer.get("ranks") or []:
        rank, pid, at, seconds, via, ids = row
        threads, found, collectives = classes[int(at)]
        mine = [Thread(t.name, i[0], i[1], t.main, t.active, t.owns_gil, t.frames, t.raised)
                for t, i in zip(threads, ids, strict=False)]
        out.append(RankStack(pid=int(pid), rank=rank, host=host, threads=mine,
                             collective=found, collectives=collectives,
                             seconds=float(seconds or 0.0), via=via))
    for e in answer.get("errors") or []:
        out.append(RankStack(pid=int(e.get("pid") or 0), rank=e.get("rank"), host=host,
                             error=str(e.get("error")), seconds=float(e.get("seconds") or 0),
                             via=e.get("via")))
    return out


# --- eval ---------------------------------------------------------------------------------

_PER_RANK = ("rank", "pid")


def eval_answer(lines: list[dict[str, Any]]) -> dict[str, Any]:
    """A node's ``eval`` lines as value classes: each distinct line (its rank and pid left
    out) once, with the ranks and pids that gave it."""
    index: dict[str, int] = {}
    classes: list[dict[str, Any]] = []
    for line in lines:
        value = {k: v for k, v in line.items() if k not in _PER_RANK}
        key = json.dumps(value, sort_keys=True)
        at = index.get(key)
        if at is None:
            at = index[key] = len(classes)
            classes.append({"line": value, "keys": list(line), "ranks": [], "pids": []})
        classes[at]["ranks"].append(line.get("rank"))
        classes[at]["pids"].append(line.get("pid"))
    return {"fanin": FORMAT, "classes": classes}


def eval_lines(answer: dict[str, Any]) -> list[dict[str, Any]]:
    """Every rank's line of a node's ``eval`` answer, as the node printed it."""
    out = []
    for c in answer.get("classes") or []:
        line, keys = c.get("line") or {}, c.get("keys") or []
        for rank, pid in zip(c.get("ranks") or [], c.get("pids") or [], strict=False):
            mine = {"rank": rank, "pid": pid}
            out.append({k: mine[k] if k in mine else line.get(k) for k in keys})
    return out

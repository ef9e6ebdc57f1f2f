"""Where a compare reads the ranks: at one point of training for all of them.

Ranks read at different moments of a training job are often a step apart, and an unchanged
weight then looks diverged. So ``rankdebug eval`` of several running ranks reads every rank
after the same optimizer step, told apart by the rank's collective count
(``runtime.at_step``): each rank reads after the first step that ends past every rank's
count when asked, and a rank that passed it before it was asked reads a later one, which its
reply says: the compare tries again. Stopped ranks (paused by the debugger, held at an
exception) are read where they are. The compare event says which point it was:

- ``"at": {"collective": {"op": "optimizer.step", "seq": S}}``: after the optimizer step
  that ended at the rank's collective #S (over its process groups), on every rank;
- ``"at": {"paused": true}``: every rank was stopped, and read where it stands;
- ``"at": null``: read as each answered (``--now``, one rank, no process group, a rank
  that has made no optimizer, or no step within ``--timeout``); each result then carries
  ``seq``, and the compare warns when the values or the counts differ instead of presenting
  a difference as divergence.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from rankdebug.jobs.analysis.compare import Group
from rankdebug.jobs.discover import Rank
from rankdebug.ranks import label
from rankdebug.runtime.wire import ask_all

POINT_TIMEOUT_S = 5.0
TRIES = 3  # a rank that passed the step before its hook was in place reads a later one

Ask = Callable[[int | None], list[dict[str, Any]]]


def read(args: argparse.Namespace, ranks: list[Rank],
         ask: Ask) -> tuple[list[dict[str, Any]], dict[str, Any] | None, str | None]:
    """The ranks' replies to ``ask`` (the eval; given a count, read after that step), the
    point they were read at (``at``), and a note when one point was sought and not found."""
    if args.now or len(ranks) < 2:
        return ask(None), None, None
    points = ask_all([str(r.socket) for r in ranks], {"command": "point"},
                     timeout=POINT_TIMEOUT_S)
    answered = [p for p in points if isinstance(p, dict) and p.get("event") == "point"]
    if len(answered) != len(points):
        return ask(None), None, None  # a rank that cannot say: read as each answers
    if all(p.get("stopped") is True for p in answered):
        return ask(None), {"paused": True}, None
    counts = [p.get("seq") for p in answered]
    if any(p.get("stopped") is True or not _count(c) for p, c in zip(answered, counts,
                                                                      strict=True)):
        return ask(None), None, None  # some stopped and some not, or no process group
    bare = [r for r, p in zip(ranks, answered, strict=True) if p.get("optimizer") is False]
    if bare:
        known = [r.rank for r in bare if r.rank is not None]
        who = label(known) if known else "a rank"
        # No optimizer made: no step comes to read at, and waiting --timeout for one only
        # delays the same reading as each answers (a job that sets up, or does not train).
        return ask(None), None, (
            f"{who} {'has' if len(bare) == 1 else 'have'} no optimizer yet: every "
            "rank was read where it was, not after one optimizer step")
    # One past the largest count: a rank may sit just after the step that ended there.
    target = max(c for c in counts if isinstance(c, int)) + 1
    replies: list[dict[str, Any]] = []
    for _ in range(TRIES):
        replies = ask(target)
        slow = [int(r["rank"]) for r in replies if r.get("no_step")]
        if slow:
            return ask(None), None, (
                f"{label(slow)} reached no optimizer step within {args.timeout:g} s: every "
                "rank was read where it was instead (give a longer --timeout for a slow step)")
        if any(r.get("no_frame") for r in replies):
            # The frame --frame names runs before the step, not at it (a Trainer's
            # training_step): read where the ranks are, and say so.
            return ask(None), None, (
                f"--frame {args.frame} is not on the stack after an optimizer step, where a "
                "compare reads every rank at one point: the ranks were read as each "
                "answered instead")
        reached = [r["at"]["seq"] for r in replies
                   if isinstance(r.get("at"), dict) and _count(r["at"].get("seq"))]
        if len(reached) != len(replies):
            return replies, None, None  # an error (the code raised): nothing to align
        if len(set(reached)) == 1:
            return replies, {"collective": {"op": "optimizer.step",
                                            "seq": reached[0]}}, None
        target = max(reached) + 1
    return replies, None, None


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def warning(at: dict[str, Any] | None, lines: list[dict[str, Any]],
            groups: list[Group], note: str | None = None) -> str | None:
    """``note`` (why no one point was read), then what running ranks read apart may mean."""
    said = [w for w in (note, _apart(at, lines, groups)) if w]
    return "; ".join(said) if said else None


def _apart(at: dict[str, Any] | None, lines: list[dict[str, Any]],
           groups: list[Group]) -> str | None:
    """Said when running ranks were not read at one point and the values differ, or their
    counts do: the difference may be training moving on, not divergence. (Equal counts do
    not prove one point: a rank may have issued a step's collectives and not yet stepped.)"""
    if at is not None:
        return None
    seqs = [line["seq"] for line in lines
            if line.get("event") == "result" and isinstance(line.get("seq"), int)]
    if len(set(seqs)) < 2 and len(groups) < 2:
        return None
    if not seqs:
        return None  # no process group: no training step to have moved on
    where = (f" (collective #{min(seqs)} to #{max(seqs)})" if len(set(seqs)) > 1
             else f" (all at collective #{seqs[0]}, but maybe either side of a step)")
    what = "the groups may differ" if len(groups) > 1 else "the values may differ"
    return (f"the ranks were read as each answered, not at one point of training{where}: "
            f"{what} because training moved on, not because they diverged; without --now "
            "every rank is read after the same optimizer step")


def describe(at: dict[str, Any] | None) -> str | None:
    """The point, for a person."""
    if at is None:
        return None
    if at.get("paused"):
        return "read where every rank is stopped"
    seq = at.get("collective", {}).get("seq")
    return f"read after the same optimizer step on every rank (collective #{seq})"

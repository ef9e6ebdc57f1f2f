"""What holds the job, from the classes: each finding one sentence in the user's terms, with
the place in their code. Only what every read showed is said:

- ranks that exited, or raised and are held, while others wait;
- for each class of ranks waiting in a collective, the ranks of its group that are not in
  it: in another collective of the same group at the same number (mismatch) or at another
  number (one more or fewer issued), in another group's collective (and whether the two
  groups wait on each other), stuck in their own code (busy, blocked, or waking up but
  never leaving), or unread; one that is making progress is only slow, said and not blamed;
- a collective every rank of its group is in that does not complete;
- with no rank waiting, ranks blocked in one call all along.

A job with none of these is healthy, and the sentence says what was seen.
"""

from __future__ import annotations

import os
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from rankdebug.jobs.diagnose.classes import Class, key
from rankdebug.jobs.diagnose.seen import Seen, frame_json
from rankdebug.pyspy import Frame
from rankdebug.ranks import label

Groups = dict[str, set[int]]  # process group name -> its global ranks (from the handlers)


@dataclass
class Finding:
    ranks: list[int]
    why: str
    where: Frame | None

    def to_json(self) -> dict[str, Any]:
        return {"event": "culprit", "ranks": self.ranks, "why": self.why,
                "where": frame_json(self.where) if self.where else None}


@dataclass
class Verdict:
    findings: list[Finding]
    healthy: str | None  # the sentence of a healthy job


def groups_of(seen: list[Seen]) -> tuple[Groups, dict[str, str]]:
    """Every process group a handler named: its ranks, and its description."""
    members: Groups = {}
    descs: dict[str, str] = {}
    for s in seen:
        found = (s.collectives or {}).get("groups")
        if not isinstance(found, dict):
            continue
        for name, info in found.items():
            if not isinstance(info, dict):
                continue
            ranks = info.get("ranks")
            if isinstance(ranks, list):
                members.setdefault(str(name), set()).update(
                    r for r in ranks if isinstance(r, int))
            if info.get("desc"):
                descs[str(name)] = str(info["desc"])
    return members, descs


def _in_group(waiter: Seen, other: Seen, groups: Groups) -> bool:
    """Whether ``waiter``'s collective needs ``other`` (unknown group: every rank does)."""
    group = (waiter.collective or {}).get("group")
    if group is not None and groups.get(group):
        return other.rank in groups[group]
    return True


def settle(seen: list[Seen], groups: Groups) -> None:
    """A rank is stuck, whatever its stack does, when ranks wait for it in a collective of
    its group and none of its own collectives went on; one busy or waking up in one
    function, that nobody waits for, is running (a long computation, a sleep in a loop)."""
    waiting = [s for s in seen if s.state == "waiting"]
    for s in seen:
        if s.state not in ("running", "stuck"):
            continue
        waited = any(w.rank != s.rank and _in_group(w, s, groups) for w in waiting)
        if s.state == "running" and waited and not s.progressed:
            s.state = "stuck"
        elif s.state == "stuck" and not s.firm and not waited:
            s.state = "running"


def _at(frame: Frame | None) -> str:
    if frame is None:
        return "an unknown place"
    return f"{os.path.basename(frame.file)}:{frame.line} ({frame.name})"


def _verb(ranks: list[int], one: str, many: str) -> str:
    return one if len(ranks) == 1 else many


class _Words:
    """The sentences' shared pieces: a collective with its group, how long was watched (and
    the groups' ranks)."""

    def __init__(self, seen: list[Seen], groups: Groups, descs: dict[str, str]) -> None:
        self.groups, self.descs = groups, descs
        self.further: dict[int, list[int]] = {}  # id of a waiting class -> ranks ahead of it
        # id of a waiting class -> ranks waiting in another collective, read without numbers
        # (past it or not, nothing says), while a rank outside any collective holds them all
        self.elsewhere: dict[int, list[Seen]] = {}
        self.behind: set[Hashable] = set()  # their classes: said with the first, not again
        # A rank read without numbers in a numbered class's call -> that class's key.
        self.alias: dict[Hashable, Hashable] = {}
        self.seconds = max((s.seconds for s in seen), default=0.0)

    def group(self, name: str | None) -> str:
        if name is None:
            return ""
        desc = self.descs.get(name)
        return f"group {name} ({desc})" if desc else f"group {name}"

    def coll(self, c: dict[str, Any] | None, group: bool = True) -> str:
        if not c:
            return "a collective"
        text = str(c.get("op"))
        if c.get("seq") is not None:
            text += f" #{c['seq']}"
        if c.get("context"):
            text += f" ({c['context']})"
        if group and c.get("group") is not None:
            text += f" of {self.group(c['group'])}"
        return text

    def watched(self) -> str:
        return f"the {self.seconds:.1f} s watched"

    def manner(self, s: Seen, count: int = 1) -> str:
        """How a stuck rank (or ``count`` alike) stays where it is."""
        it = "it" if count == 1 else "they"
        inner = s.frames[0] if s.frames else None
        inside = (f" in {inner.name} ({os.path.basename(inner.file)}:{inner.line})"
                  if inner is not None and inner != s.where else "")
        debugger = "; a debugger is attached to it" if s.debugger else ""
        cpu = s.cpu or 0.0
        if s.manner == "busy":
            crowded = ", the rest waiting for a CPU" if cpu < 80 else ""
            going = ", going round in it" if s.moved else ""
            return f"busy (CPU {cpu:.0f}%{crowded}): spinning in Python{going}{debugger}"
        if s.manner == "blocked":
            return f"blocked{inside}: CPU idle, {it} never woke{debugger}"
        if s.manner == "waking":
            return (f"waking up (CPU {cpu:.0f}%) but never leaving"
                    f"{inside}{debugger}")
        return "no longer moving" + debugger


def _issued(s: Seen, group: str | None) -> int | None:
    info = ((s.collectives or {}).get("groups") or {}).get(group or "")
    value = info.get("issued") if isinstance(info, dict) else None
    return value if isinstance(value, int) else None


def _kind(waiters: Class, s: Seen) -> str:
    if s.state in ("exited", "raised"):
        return "said"  # its own finding says it
    if s.state == "unknown":
        return "unread"
    if s.state in ("running", "stuck"):
        return "slow" if s.state == "running" else "stuck"
    a, b = waiters.collective or {}, s.collective or {}
    if (a.get("group") is not None and a.get("group") == b.get("group")
            and a.get("seq") is not None and b.get("seq") is not None):
        if a["seq"] == b["seq"]:
            return "mismatch"
        return "ahead" if b["seq"] > a["seq"] else "order"
    if a.get("group") is not None and b.get("group") is not None:
        return "cross"
    return "different"


def _same_collective(waiters: Class, s: Seen) -> bool:
    if s.state != "waiting" or s.collective is None or waiters.collective is None:
        return False
    if key(s) == key(waiters.first):
        return True
    a, b = waiters.collective, s.collective
    if (a.get("seq") is None) != (b.get("seq") is None):
        # One side read without numbers (py-spy, beside ranks whose handlers gave them): the
        # same call at the same place cannot be told apart, so it is not said to differ.
        return a.get("op") == b.get("op") and s.where is not None and waiters.where == s.where
    return a.get("seq") is not None and all(a.get(k) == b.get(k) for k in ("op", "seq", "group"))


def _numbered_twin(w: Class, waiting: list[Class]) -> Class | None:
    """The numbered class whose call ``w``'s ranks (read without numbers) are in, if any."""
    if (w.collective or {}).get("seq") is not None:
        return None
    return next((x for x in waiting if x is not w and (x.collective or {}).get("seq")
                 is not None and _same_collective(x, w.first)), None)


def judge(seen: list[Seen], cls: list[Class], groups: Groups, descs: dict[str, str]
          ) -> Verdict:
    words = _Words(seen, groups, descs)
    waiting = _behind([c for c in cls if c.state == "waiting"])
    running = sorted(s.rank for s in seen if s.state == "running" and s.rank is not None)
    out = _ended(seen, cls, words, waiting[0] if waiting else None, running)
    notes: list[str] = []
    done: set[frozenset[Hashable]] = set()
    for w in waiting:
        x = _numbered_twin(w, waiting)
        if x is not None:
            words.alias[key(w.first)] = key(x.first)
    for w in waiting:
        if key(w.first) in words.alias or key(w.first) in words.behind:
            continue  # read without numbers in a numbered class's call: that class says it
        out += _waits(w, seen, words, done, notes)
    if not waiting:
        out += _blocked(seen, cls, words, running)
    if out:
        return Verdict(out, None)
    return Verdict([], _healthy(seen, words, running, notes))


def _behind(waiting: list[Class]) -> list[Class]:
    """The waiting classes, less those further on in their group than another (they wait
    behind the same ranks as the earliest one, which says it)."""
    earliest: dict[str, int] = {}
    for c in waiting:
        group, seq = (c.collective or {}).get("group"), (c.collective or {}).get("seq")
        if group is not None and isinstance(seq, int):
            earliest[group] = min(seq, earliest.get(group, seq))
    return [c for c in waiting if not (
        isinstance((c.collective or {}).get("seq"), int)
        and (c.collective or {}).get("seq", 0) > earliest.get(
            str((c.collective or {}).get("group")), 1 << 62))]


def _ended(seen: list[Seen], cls: list[Class], words: _Words, first: Class | None,
           running: list[int]) -> list[Finding]:
    """Ranks that exited, and ranks held at an exception, and who waits meanwhile."""
    out = []
    tail = ""
    if first is not None:
        tail = (f" while {label(first.ranks)} {_verb(first.ranks, 'waits', 'wait')} in "
                f"{words.coll(first.collective)} at {_at(first.where)}")
    elif running:
        tail = f" while {label(running)} {_verb(running, 'runs', 'run')} on"
    gone = sorted(s.rank for s in seen if s.state == "exited" and s.rank is not None)
    if gone:
        out.append(Finding(gone, f"{label(gone)} {_verb(gone, 'has', 'have')} exited{tail}",
                           None))
    for c in cls:
        if c.state != "raised":
            continue
        raised = c.first.raised or {}
        message = str(raised.get("message") or "").strip().splitlines()
        text = message[0][:120] if message else ""
        out.append(Finding(c.ranks, f"{label(c.ranks)} raised {raised.get('exception')} at "
                           f"{_at(c.where)}" + (f": {text}" if text else "")
                           + (f"; held there{tail}" if tail else ""), c.where))
    return out


def _waits(w: Class, seen: list[Seen], words: _Words, done: set[frozenset[Hashable]],
           notes: list[str]) -> list[Finding]:
    """The ranks of ``w``'s group that are not in its collective, by what they do instead
    (a pair of classes in different collectives is said once: ``done``); the slow ones go
    to ``notes``."""
    groups = words.groups
    missing = [s for s in seen if s.rank is not None and s.rank not in w.ranks
               and _in_group(w.first, s, groups) and not _same_collective(w, s)]
    if not missing:
        return _all_in(w, seen, groups, words)
    parts: dict[tuple[str, Hashable], list[Seen]] = {}
    for s in missing:
        parts.setdefault((_kind(w, s), words.alias.get(key(s), key(s))), []).append(s)
    # Ranks further on in the group (a broadcast's root and relays finish before the leaves
    # do) wait behind the same rank: said beside it. Only with no such rank do their counts
    # disagree for real (one more issued).
    ahead = sorted(s.rank for (kind, _), them in parts.items() if kind == "ahead"
                   for s in them if s.rank is not None)
    holders = any(kind in ("stuck", "unread", "cross", "different") for kind, _ in parts)
    if ahead and holders:
        parts = {k: v for k, v in parts.items() if k[0] != "ahead"}
        words.further[id(w)] = ahead
    else:
        parts = {(("order" if k[0] == "ahead" else k[0]), k[1]): v for k, v in parts.items()}
    # Ranks in another collective, none numbered, beside ranks in none: the ones in none hold
    # every collective; the others' are said beside them, not blamed as a mismatch.
    if any(kind in ("stuck", "unread") for kind, _ in parts):
        other = [x for (kind, _), them in parts.items() if kind == "different" for x in them]
        if other:
            parts = {k: v for k, v in parts.items() if k[0] != "different"}
            words.elsewhere[id(w)] = other
            words.behind.update(key(x) for x in other)
    out = []
    for (kind, k), them in parts.items():
        pair = frozenset({key(w.first), k})
        if kind in ("mismatch", "order", "cross", "different"):
            if pair in done:
                continue
            done.add(pair)
        said = _sentence(kind, w, them, words, groups)
        if said is None:
            continue
        if kind == "slow":
            notes.append(said)
        else:
            ranks = sorted(s.rank for s in them if s.rank is not None)
            out.append(Finding(ranks, said, None if kind == "unread" else them[0].where))
    return out


def _sentence(kind: str, w: Class, them: list[Seen], words: _Words, groups: Groups
              ) -> str | None:
    s = them[0]
    ranks = sorted(x.rank for x in them if x.rank is not None)
    who, they = label(ranks), label(w.ranks)
    is_ = _verb(ranks, "is", "are")
    wait = _verb(w.ranks, "waits", "wait")
    a, b = w.collective or {}, s.collective or {}
    if kind == "said":
        return None
    if kind == "unread":
        return (f"{they} {wait} in {words.coll(a)} at {_at(w.where)} for {who}, which could "
                f"not be read: {s.reason or 'no stack'}")
    if kind == "slow":
        return (f"{who} {is_} behind: {they} {wait} for {_verb(ranks, 'it', 'them')} in "
                f"{words.coll(a)} at {_at(w.where)}, and {who} {_verb(ranks, 'makes', 'make')}"
                f" progress in {_at(s.where)}: slow, not stuck")
    further = words.further.get(id(w))
    on = (f" ({label(further)} went past it and {_verb(further, 'waits', 'wait')} further "
          f"on)" if further else "")
    by_call: dict[tuple[str, str], list[int]] = {}
    for x in words.elsewhere.get(id(w), []):
        call = (words.coll(x.collective), _at(x.where))
        by_call.setdefault(call, []).append(x.rank if x.rank is not None else -1)
    for (coll, at), o in by_call.items():
        on += (f" ({label(sorted(o))} {_verb(o, 'waits', 'wait')} in {coll} at {at}, which "
               f"{who} never entered either)")
    if kind == "stuck":
        has = _verb(ranks, "it has", "they have")
        return (f"{who} never entered {words.coll(a)}, which {they} {wait} in at "
                f"{_at(w.where)}{on}: {has} stayed in {_at(s.where)} for {words.watched()}, "
                f"{words.manner(s, len(ranks))}")
    if kind == "mismatch":
        return (f"{who} {is_} in {b.get('op')} #{b.get('seq')} of {words.group(b.get('group'))}"
                f" at {_at(s.where)}, while {they} {_verb(w.ranks, 'is', 'are')} in {a.get('op')}"
                f" #{a.get('seq')} at {_at(w.where)}: the ranks called different collectives "
                f"at the same point")
    if kind == "order":
        diff = int(b["seq"]) - int(a["seq"])
        more = "more" if diff > 0 else "fewer"
        return (f"{who} {is_} in {words.coll(b)} at {_at(s.where)}, while {they} "
                f"{_verb(w.ranks, 'is', 'are')} in {words.coll(a, group=False)} at "
                f"{_at(w.where)}: {who} issued {abs(diff)} {more} "
                f"collective{'s' if abs(diff) != 1 else ''} of that group than {they}")
    if kind == "cross":
        mine, theirs = _issued(s, a.get("group")), _issued(w.first, a.get("group"))
        counts = (f" ({who} issued {mine} collectives of group {a.get('group')}, {they} "
                  f"{theirs})" if mine is not None and theirs is not None
                  and mine != theirs else "")
        h = str(b.get("group"))
        cycle = all(r in groups.get(h, set(w.ranks)) for r in w.ranks)
        end = (f", which {they} {_verb(w.ranks, 'has', 'have')} not entered: the two groups "
               f"wait on each other" if cycle else " instead")
        return (f"{who} never entered {words.coll(a)}, which {they} {wait} in at "
                f"{_at(w.where)}{on}: {who} {_verb(ranks, 'waits', 'wait')} in "
                f"{words.coll(b)} at {_at(s.where)}{end}{counts}")
    return (f"{who} {is_} in {words.coll(b)} at {_at(s.where)}, not in the {a.get('op')} "
            f"that {they} {wait} in at {_at(w.where)}: the ranks are in different collectives")


def _all_in(w: Class, seen: list[Seen], groups: Groups, words: _Words) -> list[Finding]:
    """Every rank of the group in the one collective, which does not complete: said only
    when every rank of the group was read (an unread one may be what it waits for)."""
    if any(s.state in ("unknown", "exited") and _in_group(w.first, s, groups) for s in seen):
        return []
    if len(w.ranks) < 2:
        return []
    return [Finding(w.ranks, f"{label(w.ranks)} all wait in {words.coll(w.collective)} at "
                    f"{_at(w.where)}, and it did not complete over {words.watched()} though "
                    f"every rank of it is in it (the transport, or a rank outside this job)",
                    w.where)]


def _blocked(seen: list[Seen], cls: list[Class], words: _Words, running: list[int]
             ) -> list[Finding]:
    out = []
    for c in cls:
        if c.state != "stuck":
            continue
        has = _verb(c.ranks, "has", "have")
        rest = (f" while {label(running)} {_verb(running, 'runs', 'run')} on" if running
                else "; no rank waits in a collective")
        out.append(Finding(c.ranks, f"{label(c.ranks)} {has} stayed in {_at(c.where)} for "
                           f"{words.watched()}, {words.manner(c.first, len(c.ranks))}{rest}",
                           c.where))
    return out


def _healthy(seen: list[Seen], words: _Words, running: list[int], notes: list[str]) -> str:
    """What a job with no finding showed: the ranks that moved, those that stayed in one
    function though awake (nobody waits for them, so nothing is said against them), the
    slow ones."""
    read = [s for s in seen if s.state not in ("unknown", "exited")]
    parts = []
    moved = sorted(s.rank for s in read if s.state == "running" and s.moved
                   and s.rank is not None)
    if moved:
        parts.append(f"{label(moved)} made progress over {words.watched()}")
    # The slowest: caught in a collective in the fewest reads, fewer than any rank that
    # mostly was (waiting there for it), and in less than half. A read can catch it in one
    # as a peer is stopped by py-spy: counted, not required to be none.
    waiters = [s for s in read if s.reads and s.waited * 2 >= s.reads and s.rank is not None]
    floor = min((s.waited for s in waiters), default=0)
    behind = [s for s in read if s.reads and s.state == "running" and s.rank is not None
              and s.waited * 2 < s.reads and s.waited < floor] if waiters and not notes \
        else []
    least = min((s.waited for s in behind), default=0)
    slowest = [s for s in behind if s.waited == least]
    still: dict[tuple[str, str, int], list[Seen]] = {}
    for s in read:
        if s.state == "running" and not s.moved and s.where is not None \
                and s not in slowest:
            still.setdefault((s.where.file, s.where.name, s.where.line), []).append(s)
    for them in sorted(still.values(), key=lambda t: -len(t))[:3]:
        ranks = sorted(s.rank for s in them if s.rank is not None)
        how = {"busy": "busy", "waking": "waking up"}.get(them[0].manner or "", "awake")
        parts.append(f"{label(ranks)} stayed in {_at(them[0].where)}, {how}")
    if len(still) > 3:
        parts.append(f"{len(still) - 3} more places")
    parts.extend(notes)
    if slowest:
        ranks = sorted(s.rank for s in slowest if s.rank is not None)
        who = label(ranks)
        caught = max(s.waited for s in slowest)
        seen_in = f"in {caught} of {slowest[0].reads}" if caught else "in none"
        place = ("" if slowest[0].moved else
                 f" (in {_at(slowest[0].where)} at every read)")
        parts.append(f"{who} {_verb(ranks, 'is', 'are')} the slowest: "
                     f"{label(sorted(s.rank for s in waiters if s.rank is not None))} waited "
                     f"in a collective in most reads, {who} {seen_in}{place}")
    unread = sorted(s.rank for s in seen if s.state == "unknown" and s.rank is not None)
    if unread:
        parts.append(f"{label(unread)} could not be read")
    # Ranks waiting for a slow one: they do wait, on a rank that makes progress.
    lead = "no rank is stuck" if notes or slowest else "no rank waits on another"
    return f"{lead}: " + "; ".join(parts) if parts else lead

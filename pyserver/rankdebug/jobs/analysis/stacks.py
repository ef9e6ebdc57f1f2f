"""Every thread of every rank at one moment, grouped by stack.

All ranks are read at once, in parallel: an armed rank (``rankdebug launch --arm``) reports
its own stacks through its handler (no ptrace, the rank does not stop; a rank that cannot
answer, e.g. one holding the GIL in native code, is read by py-spy instead); any other rank
through one ``py-spy dump --json``, which stops it for the few milliseconds py-spy takes
(``nonblocking``: not at all, at the price of a possibly torn stack).

Grouping: ranks whose thread has the very same frames (function, file, line) share a row;
the main thread's rows come first, largest first, and every main-thread row that is not the
largest is *odd* (the rank that hangs a job is usually the odd one). Each row has a summary
(``all_reduce ← train_step ← main``: innermost first, library chains shortened to the call
the user's code made) and the collective the rank waits in. An armed rank's handler names it
from PyTorch's Flight Recorder (``runtime.collectives``): its number and who issued it, also
where no torch.distributed frame is on the stack (DDP's bucket all_reduce inside
``backward``, ``work.wait()`` of an async one); the row says ``all_reduce #4 (DDP bucket,
from backward)``. A rank read by py-spy has only its stack: the torch.distributed call on it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Hashable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from rankdebug.pyspy import (
    COLLECTIVES,
    DUMP_TIMEOUT_S,
    PYSPY_PIN,
    Frame,
    StacksError,
    Thread,
    collective,
    complaint,
    find_pyspy,
    parse_dump,
)
from rankdebug.pyspy import dump as _dump
from rankdebug.ranks import label
from rankdebug.runtime.collectives import GENERIC

__all__ = ["COLLECTIVES", "DUMP_TIMEOUT_S", "PYSPY_PIN", "Frame", "StacksError", "Thread",
           "collective", "dump", "find_pyspy", "parse_dump"]

HANDLER_TIMEOUT_S = 3.0  # an armed rank answers in milliseconds, or not at all
# py-spy processes at once: each takes ~10 ms of CPU, and a thousand at once would only
# crowd the machine (measured on 2 cores: 8, 32 or 256 at once read 256 ranks as fast).
PYSPY_AT_ONCE = 64
SUMMARY_NAMES = 5


@dataclass
class RankStack:
    pid: int
    rank: int | None
    host: str | None = None
    threads: list[Thread] = field(default_factory=list)
    error: str | None = None
    collective: dict[str, Any] | None = None
    collectives: dict[str, Any] | None = None  # from its handler: ``runtime.collectives``
    seconds: float = 0.0
    via: str | None = None  # "handler" | "py-spy"
    socket: str | None = None  # an armed rank's control socket

    @property
    def label(self) -> str:
        return str(self.rank) if self.rank is not None else f"pid {self.pid}"


@dataclass
class Group:
    thread: str
    main: bool
    ranks: list[RankStack]
    frames: list[Frame]
    summary: str
    collective: str | None
    active: bool
    odd: bool = False
    raised: str | None = None  # the exception a held thread of these ranks raised
    # ``all_reduce #4 (DDP bucket, from backward)``; each rank's, where they differ
    collective_text: str | None = None

    def label(self) -> str:
        return ranks_label([r.rank for r in self.ranks], [r.pid for r in self.ranks])

    def to_json(self) -> dict[str, Any]:
        return {
            "thread": self.thread,
            "main": self.main,
            "ranks": [r.rank for r in self.ranks],
            "pids": [r.pid for r in self.ranks],
            "label": self.label(),
            "summary": self.summary,
            "collective": self.collective,
            "collective_text": self.collective_text,
            "active": self.active,
            "odd": self.odd,
            "raised": self.raised,
            "frames": [f.to_json() for f in self.frames],
        }


def dump(pid: int, *, nonblocking: bool = False, timeout: float = DUMP_TIMEOUT_S,
         exe: str | None = None) -> list[Thread]:
    """Every Python thread of ``pid`` (py-spy's order: innermost frame first); a refused
    ptrace says why."""
    return _dump(pid, nonblocking=nonblocking, timeout=timeout, exe=exe, explain=_pyspy_error)


def _pyspy_error(pid: int, text: str) -> str:
    from rankdebug.jobs.injector.ptrace import diagnose

    text = complaint(text)
    if "ermission" in text or "not permitted" in text:
        hint = diagnose(pid)
        return f"{text}: {hint}" if hint else text
    return text


def _generic(name: str) -> bool:
    """A decorator's inner function: `wrapper`, or as newer py-spy names it,
    `_exception_logger.<locals>.wrapper`."""
    return name.rsplit(".", 1)[-1] in GENERIC


def summary(frames: list[Frame]) -> str:
    """``all_reduce ← train_step ← main``: the innermost frame, then the user's frames, and
    for each chain of library frames the call the user's code made into it."""
    if not frames:
        return "(no Python frames)"
    names = [frames[0].name]
    chain: list[Frame] = []
    for frame in frames[1:]:
        if frame.library:
            chain.append(frame)
            continue
        if chain:
            pick = next((f for f in reversed(chain) if not _generic(f.name)), None)
            if pick is not None and pick.name != names[-1]:
                names.append(pick.name)
            chain = []
        if frame.name != names[-1]:
            names.append(frame.name)
    if len(names) > SUMMARY_NAMES:
        names = [*names[: SUMMARY_NAMES - 1], "…", names[-1]]
    return " ← ".join(names)


def ranks_label(ranks: list[int | None], pids: list[int]) -> str:
    """``ranks 0-2,4`` / ``rank 3`` / ``pid 123``."""
    known = sorted(r for r in ranks if r is not None)
    out = []
    if known:
        out.append(label(known))
    unknown = [p for r, p in zip(ranks, pids, strict=True) if r is None]
    if unknown:
        out.append(("pids " if len(unknown) > 1 else "pid ") + ",".join(map(str, unknown)))
    return " ".join(out)


def _thread_role(thread: Thread) -> str:
    if thread.main:
        return "MainThread"
    return re.sub(r"[-_ ]?\d+", "", thread.name) or thread.name


def group(stacks: list[RankStack], odd: set[int] | None = None) -> list[Group]:
    """Rows of ranks that share a thread's stack: main threads first, largest rows first.
    ``odd``: the ranks (-pid for an unknown rank) decided to be odd over several reads
    (``odd_ones``); without it, every main-thread row but the largest is odd."""
    rows: dict[tuple[Any, ...], Group] = {}
    texts: dict[tuple[Any, ...], dict[str, list[RankStack]]] = {}
    # Ranks of one class of a node's answer (``fanin``) share their frames' list: its key
    # and collective are worked out once.
    keys: dict[tuple[int, str, bool], tuple[Any, dict[str, Any] | None]] = {}
    for rs in stacks:
        for thread in rs.threads:
            exception = str(thread.raised.get("exception")) if thread.raised else None
            shared = keys.get((id(thread.frames), thread.name, thread.main))
            if shared is None:
                shared = keys[(id(thread.frames), thread.name, thread.main)] = (
                    thread.key(), collective([thread]))
            key = (thread.main, _thread_role(thread), shared[0], exception)
            row = rows.get(key)
            if row is not None and row.ranks[-1] is rs:
                continue  # another thread of a rank already in the row
            found = _collective_in(rs, thread, shared[1])
            if row is None:
                rows[key] = Group(
                    thread="MainThread" if thread.main else thread.name,
                    main=thread.main, ranks=[rs], frames=thread.frames,
                    summary=summary(thread.frames),
                    collective=found["name"] if found else None, active=thread.active,
                    raised=exception)
            else:
                row.ranks.append(rs)
            if found:
                texts.setdefault(key, {}).setdefault(_text(found), []).append(rs)
    for key, by_text in texts.items():
        rows[key].collective_text = "; ".join(
            text if len(by_text) == 1
            else f"{text} ({ranks_label([r.rank for r in of], [r.pid for r in of])})"
            for text, of in by_text.items())
    out = sorted(rows.values(), key=lambda g: (
        not g.main, -len(g.ranks), min((r.rank if r.rank is not None else 1 << 30)
                                       for r in g.ranks), g.thread))
    mains = [g for g in out if g.main]
    if odd is not None:
        for g in mains:
            g.odd = any(_key(r) in odd for r in g.ranks)
    elif len(mains) > 1:
        for g in mains[1:]:
            g.odd = True
    return out


def _key(rs: RankStack) -> int:
    return rs.rank if rs.rank is not None else -rs.pid


def take(targets: list[tuple[int, int | None, str | None]], *, nonblocking: bool = False,
         timeout: float = DUMP_TIMEOUT_S,
         sockets: dict[int, str] | None = None) -> list[RankStack]:
    """Read every ``(pid, rank, host)`` at once; a rank that cannot be read has ``error``.
    ``sockets``: pid -> control socket of the armed ranks among them. The armed ranks are
    asked together from this thread (``wire.ask_timed``); py-spy reads the others, and any
    armed rank that did not answer, at most ``PYSPY_AT_ONCE`` at a time."""
    sockets = sockets or {}
    out = [RankStack(pid, rank, host, socket=sockets.get(pid)) for pid, rank, host in targets]
    _from_handlers([rs for rs in out if rs.socket])
    rest = [rs for rs in out if rs.via is None]
    # No py-spy is an error of the command when ranks need it; of the rank, when only an armed
    # rank that did not answer does.
    exe = find_pyspy() if any(rs.socket is None for rs in rest) else None
    deadline = time.monotonic() + timeout  # for them all: a queue of hung ones adds nothing

    def one(rs: RankStack) -> None:
        t0 = time.monotonic()
        rs.via = "py-spy"
        try:
            if deadline - t0 < 0.5:
                raise StacksError(f"py-spy took more than {timeout:.0f} s")
            rs.threads = dump(rs.pid, nonblocking=nonblocking, timeout=deadline - t0, exe=exe)
        except StacksError as exc:
            rs.error = str(exc)
        rs.seconds = round(rs.seconds + time.monotonic() - t0, 3)

    if rest:
        with ThreadPoolExecutor(max_workers=min(len(rest), PYSPY_AT_ONCE)) as pool:
            list(pool.map(one, rest))
    for rs in out:
        if rs.error is None:
            rs.collective = _collective_of(rs)
    return out


def _from_handlers(armed: list[RankStack]) -> None:
    """Armed ranks' own accounts of their threads, all asked at once; a rank that cannot
    give one keeps ``via`` unset (py-spy reads it then)."""
    from rankdebug.runtime.wire import WireError, ask_timed

    if not armed:
        return
    replies = ask_timed([str(rs.socket) for rs in armed], {"command": "stacks"},
                        timeout=HANDLER_TIMEOUT_S)
    for rs, (reply, seconds) in zip(armed, replies, strict=True):
        rs.seconds = round(seconds, 3)
        if isinstance(reply, WireError):
            continue
        rs.via = "handler"
        found = reply.get("collectives")
        rs.collectives = found if isinstance(found, dict) else None
        try:
            rs.threads = parse_dump(reply.get("threads"), rs.pid)
        except StacksError as exc:
            rs.error = str(exc)


def _collective_of(rs: RankStack) -> dict[str, Any] | None:
    """The collective a rank waits in: the one its handler names from PyTorch's records
    (``collectives.current``: the Flight Recorder's open entry, also where no torch.distributed
    frame is on the stack), else the torch.distributed call on its main thread's stack, else
    on any other thread's."""
    main = next((t for t in rs.threads if t.main), None)
    return _told(rs, main) or collective([main] if main else []) or collective(rs.threads)


def _told(rs: RankStack, main: Thread | None) -> dict[str, Any] | None:
    """The handler's ``collectives.current`` as ``collective()`` gives one, with its
    ``seq``, ``group``, ``context`` and ``label``; None when the handler names none."""
    current = (rs.collectives or {}).get("current")
    if not isinstance(current, dict) or not isinstance(current.get("op"), str):
        return None
    seq, group, context = current.get("seq"), current.get("group"), current.get("context")
    text = current.get("label")
    return {"name": current["op"], "file": current.get("file"), "line": current.get("line"),
            "thread": main.name if main else "MainThread",
            "seq": seq if isinstance(seq, int) and not isinstance(seq, bool) else None,
            "group": group if isinstance(group, str) else None,
            "context": context if isinstance(context, str) else None,
            "label": text if isinstance(text, str) and text else current["op"]}


def _collective_in(rs: RankStack, thread: Thread, on_stack: dict[str, Any] | None
                   ) -> dict[str, Any] | None:
    """The collective ``thread`` of the rank waits in: the rank's own (``_collective_of``)
    where it is that thread's, else the torch.distributed call on the thread's stack
    (``on_stack``)."""
    own = rs.collective
    if isinstance(own, dict) and own.get("thread") == thread.name and own.get("name"):
        return own
    return on_stack


def _text(found: dict[str, Any]) -> str:
    text = found.get("label")
    return text if isinstance(text, str) and text else str(found.get("name"))


def _mains(stacks: list[RankStack]) -> list[tuple[int, Thread]]:
    """(rank, main thread) of every rank read (a rank number, else -pid)."""
    out = []
    for rs in stacks:
        main = next((t for t in rs.threads if t.main), None)
        if main is not None:
            out.append((_key(rs), main))
    return out


def main_stacks(stacks: list[RankStack]) -> list[tuple[int, list[Frame]]]:
    """(rank, main thread's frames) of every rank read."""
    return [(rank, main.frames) for rank, main in _mains(stacks)]


def main_keys(stacks: list[RankStack]) -> dict[int, Hashable]:
    """rank -> its main thread's stack, comparable (``odd_ones`` reads these); worked out
    once per frames list (ranks of one class of a node's answer share theirs)."""
    keys: dict[int, Hashable] = {}
    out: dict[int, Hashable] = {}
    for rank, main in _mains(stacks):
        key = keys.get(id(main.frames))
        if key is None:
            key = keys[id(main.frames)] = main.key()
        out[rank] = key
    return out


def mismatches(stacks: list[RankStack]) -> list[dict[str, Any]]:
    """The process groups whose ranks are at different collectives (``collective_check``)."""
    from rankdebug.jobs.analysis.collective_check import check

    return check({rs.rank: rs.collectives for rs in stacks
                  if rs.rank is not None and rs.collectives is not None})


@dataclass
class View:
    """How a reading is shown: reads taken, the collectives ranks disagree on (None: from
    this reading), the merged tree, every thread's frames."""

    samples: int = 1
    collectives: list[dict[str, Any]] | None = None
    tree: bool = False
    verbose: bool = False


def report(stacks: list[RankStack], groups: list[Group], job: str | None,
           seconds: float, view: View | None = None) -> dict[str, Any]:
    """The JSON ``rankdebug stacks --json`` prints."""
    from rankdebug.jobs.analysis.stack_tree import merge

    view = view or View()
    odd = sorted({_key(r) for g in groups if g.odd for r in g.ranks})
    shown: dict[int, list[dict[str, Any]]] = {}  # a frames list shared by ranks: once

    def frames(t: Thread) -> list[dict[str, Any]]:
        got = shown.get(id(t.frames))
        if got is None:
            got = shown[id(t.frames)] = [f.to_json() for f in t.frames]
        return got

    return {
        "job": job,
        "time": time.time(),
        "seconds": round(seconds, 3),
        "ranks": [{
            "rank": rs.rank, "pid": rs.pid, "host": rs.host, "error": rs.error,
            "collective": rs.collective, "collectives": rs.collectives,
            "seconds": rs.seconds, "via": rs.via,
            "threads": [{
                "name": t.name, "thread_id": t.thread_id, "os_thread_id": t.os_thread_id,
                "main": t.main, "active": t.active, "owns_gil": t.owns_gil,
                "raised": t.raised, "frames": frames(t),
            } for t in rs.threads],
        } for rs in stacks],
        "groups": [g.to_json() for g in groups],
        "odd": odd,
        "samples": view.samples,
        "tree": [n.to_json() for n in merge(main_stacks(stacks))],
        "collectives": view.collectives if view.collectives is not None
        else mismatches(stacks),
    }


def render(stacks: list[RankStack], groups: list[Group], job: str | None, seconds: float,
           view: View | None = None) -> str:
    """The plain-text view: the collectives ranks disagree on, then one row per group, the
    odd ones marked, frames under each (``tree``: the merged tree instead)."""
    from rankdebug.jobs.analysis.stack_tree import merge
    from rankdebug.jobs.analysis.stack_tree import render as render_tree

    view = view or View()
    lines = []
    head = f"job {job}" if job else "processes"
    ok = [rs for rs in stacks if rs.error is None]
    lines.append(f"{head}: {len(ok)} of {len(stacks)} ranks read in {seconds:.2f} s")
    for found in mismatches(stacks) if view.collectives is None else view.collectives:
        lines.append(f"  collectives: {found['message']}")
    if view.tree:
        lines.append("")
        lines.append("main threads, merged (ranks at each frame; · library code):")
        lines.extend(render_tree(merge(main_stacks(stacks)), len(ok)))
        return "\n".join(lines) + "\n"
    for rs in stacks:
        if rs.error is not None:
            lines.append(f"  {ranks_label([rs.rank], [rs.pid])} (pid {rs.pid}): {rs.error}")
    section = None
    for g in groups:
        name = "main thread" if g.main else "other threads"
        if name != section:
            section = name
            lines.append("")
            lines.append(f"{name}:")
        mark = "  ◀ odd one out" if g.odd else ""
        waits = g.collective_text or g.collective
        where = f"  [waiting in {waits}]" if waits else ""
        if g.raised:
            where = f"  [raised {g.raised}: held]"
        state = "" if g.active else " (idle)"
        thread = "" if g.main else f" {g.thread}:"
        lines.append(f"  {g.label()}:{thread} {g.summary}{where}{state}{mark}")
        if g.main or view.verbose:
            width = max((len(f.name) for f in g.frames), default=0)
            for f in g.frames:
                lines.append(f"      {f.name.ljust(width)}  {f.short()}")
    return "\n".join(lines) + "\n"

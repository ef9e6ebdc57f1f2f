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
the user's code made) and, where torch.distributed is on the stack, the collective the rank
waits in.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from rankdebug.runtime.frames import LIBRARY_FILE, own_file

PYSPY_PIN = "py-spy==0.4.2"
DUMP_TIMEOUT_S = 20.0
HANDLER_TIMEOUT_S = 3.0  # an armed rank answers in milliseconds, or not at all

# torch.distributed functions a rank waits in (Python frames; the wait itself is in C++).
COLLECTIVES = frozenset({
    "all_reduce", "all_reduce_coalesced", "all_gather", "all_gather_into_tensor",
    "all_gather_object", "all_gather_coalesced", "_all_gather_base", "all_to_all",
    "all_to_all_single", "barrier", "monitored_barrier", "broadcast", "broadcast_object_list",
    "gather", "gather_object", "reduce", "reduce_scatter", "reduce_scatter_tensor",
    "_reduce_scatter_base", "scatter", "scatter_object_list", "send", "recv",
    "send_object_list", "recv_object_list", "batch_isend_irecv", "wait_tensor",
    "init_process_group", "new_group", "destroy_process_group", "_store_based_barrier",
    "_sync_module_states", "_verify_param_shape_across_processes", "_sync_buffers",
    "_sync_params_and_buffers",
})
_DIST_FILE = re.compile(r"torch[/\\](distributed|nn[/\\]parallel)[/\\]")
_GENERIC = frozenset({
    "wrapper", "inner", "wrapped", "_fn", "fn", "decorate_context", "__call__",
    "_call_impl", "_wrapped_call_impl", "wrap", "_wrapper", "func", "new_fn",
})
SUMMARY_NAMES = 5


class StacksError(Exception):
    """py-spy is missing, or cannot read processes here at all."""


@dataclass
class Frame:
    name: str
    file: str
    line: int

    @property
    def library(self) -> bool:
        return bool(LIBRARY_FILE.search(self.file))

    def short(self) -> str:
        parts = self.file.replace("\\", "/").split("/")
        if self.library:
            for marker in ("site-packages", "dist-packages"):
                if marker in parts:
                    parts = parts[parts.index(marker) + 1:]
                    break
            else:
                parts = parts[-1:]
        else:
            parts = parts[-2:]
        return f"{'/'.join(parts)}:{self.line}"

    def to_json(self) -> dict[str, Any]:
        """What ``--json`` shows of a frame: where it is, and whether it is library code
        (the extension dims those) with its short place."""
        return {"name": self.name, "file": self.file, "line": self.line,
                "library": self.library, "short": self.short()}


@dataclass
class Thread:
    name: str
    thread_id: int | None
    os_thread_id: int | None
    main: bool
    active: bool
    owns_gil: bool
    frames: list[Frame]
    # Held at an uncaught exception (``rankdebug.runtime.hold``): its frames are the
    # traceback's; exception, message, file, line, function.
    raised: dict[str, Any] | None = None

    def key(self) -> tuple[tuple[str, str, int], ...]:
        return tuple((f.name, f.file, f.line) for f in self.frames)


@dataclass
class RankStack:
    pid: int
    rank: int | None
    host: str | None = None
    threads: list[Thread] = field(default_factory=list)
    error: str | None = None
    collective: dict[str, Any] | None = None
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
            "active": self.active,
            "odd": self.odd,
            "raised": self.raised,
            "frames": [f.to_json() for f in self.frames],
        }


def find_pyspy() -> str:
    """The py-spy binary: next to this Python first (a venv not on PATH), then on PATH."""
    here = os.path.join(os.path.dirname(sys.executable), "py-spy")
    if os.access(here, os.X_OK):
        return here
    found = shutil.which("py-spy")
    if found is None:
        raise StacksError(
            f"py-spy is not installed: pip install '{PYSPY_PIN}' (it ships its own binary)")
    return found


def dump(pid: int, *, nonblocking: bool = False, timeout: float = DUMP_TIMEOUT_S,
         exe: str | None = None) -> list[Thread]:
    """Every Python thread of ``pid`` (py-spy's order: innermost frame first)."""
    argv = [exe or find_pyspy(), "dump", "--pid", str(pid), "--json"]
    if nonblocking:
        argv.append("--nonblocking")
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                             check=False)
    except subprocess.TimeoutExpired as exc:
        raise StacksError(f"py-spy took more than {timeout:.0f} s") from exc
    except OSError as exc:
        raise StacksError(f"cannot run py-spy: {exc}") from exc
    if out.returncode != 0:
        raise StacksError(_pyspy_error(pid, out.stderr or out.stdout))
    try:
        data = json.loads(out.stdout)
    except ValueError as exc:
        raise StacksError(f"py-spy printed no stack: {out.stdout[:200]!r}") from exc
    return parse_dump(data, pid)


def _pyspy_error(pid: int, text: str) -> str:
    from rankdebug.jobs.ptrace import diagnose

    text = text.strip().splitlines()[-1] if text.strip() else "py-spy failed"
    if "ermission" in text or "not permitted" in text:
        hint = diagnose(pid)
        return f"{text}: {hint}" if hint else text
    return text


def parse_dump(data: Any, pid: int) -> list[Thread]:
    threads = []
    for item in data if isinstance(data, list) else []:
        if not isinstance(item, dict):
            continue
        raw = [f for f in item.get("frames") or [] if isinstance(f, dict)]
        # rankdebug's own frames (the hook that runs a chosen rank's script) stay hidden.
        frames = [
            Frame(str(f.get("name", "?")), str(f.get("filename", "?")), int(f.get("line") or 0))
            for f in raw if not own_file(str(f.get("filename", "")))
        ]
        if raw and not frames:
            continue  # a thread of rankdebug's own
        os_tid = item.get("os_thread_id")
        name = str(item.get("thread_name") or "")
        raised = item.get("raised")
        threads.append(Thread(
            name=name or f"thread {os_tid}",
            thread_id=item.get("thread_id"),
            os_thread_id=os_tid,
            main=os_tid == pid or (os_tid is None and name == "MainThread"),
            active=bool(item.get("active")),
            owns_gil=bool(item.get("owns_gil")),
            frames=frames,
            raised=raised if isinstance(raised, dict) else None,
        ))
    threads.sort(key=lambda t: (not t.main, t.name))
    return threads


def collective(threads: list[Thread]) -> dict[str, Any] | None:
    """The torch.distributed call a rank waits in: the innermost one on its main thread (or
    on any thread when the main one has none)."""
    for thread in sorted(threads, key=lambda t: not t.main):
        for frame in thread.frames:
            if frame.name in COLLECTIVES and _DIST_FILE.search(frame.file):
                return {"name": frame.name, "file": frame.file, "line": frame.line,
                        "thread": thread.name}
    return None


def _generic(name: str) -> bool:
    """A decorator's inner function: `wrapper`, or as newer py-spy names it,
    `_exception_logger.<locals>.wrapper`."""
    return name.rsplit(".", 1)[-1] in _GENERIC


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
    parts = []
    i = 0
    while i < len(known):
        j = i
        while j + 1 < len(known) and known[j + 1] == known[j] + 1:
            j += 1
        parts.append(str(known[i]) if i == j else f"{known[i]}-{known[j]}")
        i = j + 1
    out = []
    if known:
        out.append(("ranks " if len(known) > 1 else "rank ") + ",".join(parts))
    unknown = [p for r, p in zip(ranks, pids, strict=True) if r is None]
    if unknown:
        out.append(("pids " if len(unknown) > 1 else "pid ") + ",".join(map(str, unknown)))
    return " ".join(out)


def _thread_role(thread: Thread) -> str:
    if thread.main:
        return "MainThread"
    return re.sub(r"[-_ ]?\d+", "", thread.name) or thread.name


def group(stacks: list[RankStack]) -> list[Group]:
    """Rows of ranks that share a thread's stack: main threads first, largest rows first."""
    rows: dict[tuple[Any, ...], Group] = {}
    for rs in stacks:
        for thread in rs.threads:
            exception = str(thread.raised.get("exception")) if thread.raised else None
            key = (thread.main, _thread_role(thread), thread.key(), exception)
            row = rows.get(key)
            if row is None:
                found = collective([thread])
                rows[key] = Group(
                    thread="MainThread" if thread.main else thread.name,
                    main=thread.main, ranks=[rs], frames=thread.frames,
                    summary=summary(thread.frames),
                    collective=found["name"] if found else None, active=thread.active,
                    raised=exception)
            elif rs not in row.ranks:
                row.ranks.append(rs)
    out = sorted(rows.values(), key=lambda g: (
        not g.main, -len(g.ranks), min((r.rank if r.rank is not None else 1 << 30)
                                       for r in g.ranks), g.thread))
    mains = [g for g in out if g.main]
    if len(mains) > 1:
        for g in mains[1:]:
            g.odd = True
    return out


def take(targets: list[tuple[int, int | None, str | None]], *, nonblocking: bool = False,
         timeout: float = DUMP_TIMEOUT_S,
         sockets: dict[int, str] | None = None) -> list[RankStack]:
    """Read every ``(pid, rank, host)`` at once; a rank that cannot be read has ``error``.
    ``sockets``: pid -> control socket of the armed ranks among them."""
    sockets = sockets or {}
    exe = find_pyspy() if any(pid not in sockets for pid, _, _ in targets) else None
    out = [RankStack(pid, rank, host, socket=sockets.get(pid)) for pid, rank, host in targets]

    def one(rs: RankStack) -> None:
        t0 = time.monotonic()
        try:
            rs.threads = _from_handler(rs) if rs.socket else []
            if rs.via is None:
                rs.via = "py-spy"
                rs.threads = dump(rs.pid, nonblocking=nonblocking, timeout=timeout, exe=exe)
            rs.collective = collective(rs.threads)
        except StacksError as exc:
            rs.error = str(exc)
        rs.seconds = round(time.monotonic() - t0, 3)

    workers = [threading.Thread(target=one, args=(rs,), daemon=True) for rs in out]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return out


def _from_handler(rs: RankStack) -> list[Thread]:
    """An armed rank's own account of its threads; [] with ``via`` unset when it cannot give
    one (py-spy reads it then)."""
    from rankdebug.runtime.wire import WireError, ask

    assert rs.socket is not None
    try:
        reply = ask(rs.socket, {"command": "stacks"}, timeout=HANDLER_TIMEOUT_S)
    except WireError:
        return []
    rs.via = "handler"
    return parse_dump(reply.get("threads"), rs.pid)


def report(stacks: list[RankStack], groups: list[Group], job: str | None,
           seconds: float) -> dict[str, Any]:
    """The JSON ``rankdebug stacks --json`` prints."""
    odd = sorted({r.rank if r.rank is not None else -r.pid
                  for g in groups if g.odd for r in g.ranks})
    return {
        "job": job,
        "time": time.time(),
        "seconds": round(seconds, 3),
        "ranks": [{
            "rank": rs.rank, "pid": rs.pid, "host": rs.host, "error": rs.error,
            "collective": rs.collective, "seconds": rs.seconds, "via": rs.via,
            "threads": [{
                "name": t.name, "thread_id": t.thread_id, "os_thread_id": t.os_thread_id,
                "main": t.main, "active": t.active, "owns_gil": t.owns_gil,
                "raised": t.raised, "frames": [f.to_json() for f in t.frames],
            } for t in rs.threads],
        } for rs in stacks],
        "groups": [g.to_json() for g in groups],
        "odd": odd,
    }


def render(stacks: list[RankStack], groups: list[Group], job: str | None, seconds: float,
           *, verbose: bool = False) -> str:
    """The plain-text view: one row per group, the odd ones marked, frames under each."""
    lines = []
    head = f"job {job}" if job else "processes"
    ok = [rs for rs in stacks if rs.error is None]
    lines.append(f"{head}: {len(ok)} of {len(stacks)} ranks read in {seconds:.2f} s")
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
        where = f"  [waiting in {g.collective}]" if g.collective else ""
        if g.raised:
            where = f"  [raised {g.raised}: held]"
        state = "" if g.active else " (idle)"
        thread = "" if g.main else f" {g.thread}:"
        lines.append(f"  {g.label()}:{thread} {g.summary}{where}{state}{mark}")
        if g.main or verbose:
            width = max((len(f.name) for f in g.frames), default=0)
            for f in g.frames:
                lines.append(f"      {f.name.ljust(width)}  {f.short()}")
    return "\n".join(lines) + "\n"

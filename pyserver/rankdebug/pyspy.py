"""py-spy, the one way to read a Python process's stack from outside without stopping it
(``nonblocking``) or for the few milliseconds it takes: the threads and frames of a rank,
and the torch.distributed collective it waits in. Used by ``rankdebug stacks`` (jobs) and by
the supervisor, which shows a rank waiting in a collective as paused (supervise.together).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rankdebug.runtime.frames import LIBRARY_FILE, debugger_cut, own_file

PYSPY_PIN = "py-spy==0.4.2"
DUMP_TIMEOUT_S = 20.0

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


def _quiet_env() -> dict[str, str]:
    """Our environment without Rust's backtraces: with ``RUST_BACKTRACE`` set, py-spy's error
    ends in a backtrace, and its last line ("10: main") would be said instead of the error."""
    return {**os.environ, "RUST_BACKTRACE": "0", "RUST_LIB_BACKTRACE": "0"}


def dump(pid: int, *, nonblocking: bool = False, timeout: float = DUMP_TIMEOUT_S,
         exe: str | None = None, explain: Callable[[int, str], str] | None = None
         ) -> list[Thread]:
    """Every Python thread of ``pid`` (py-spy's order: innermost frame first). ``explain``
    turns py-spy's complaint into the error's text (say why ptrace was refused)."""
    argv = [exe or find_pyspy(), "dump", "--pid", str(pid), "--json"]
    if nonblocking:
        argv.append("--nonblocking")
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                             check=False, env=_quiet_env())
    except subprocess.TimeoutExpired as exc:
        raise StacksError(f"py-spy took more than {timeout:.0f} s") from exc
    except OSError as exc:
        raise StacksError(f"cannot run py-spy: {exc}") from exc
    if out.returncode != 0:
        text = out.stderr or out.stdout
        raise StacksError(explain(pid, text) if explain else complaint(text))
    try:
        data = json.loads(out.stdout)
    except ValueError as exc:
        raise StacksError(f"py-spy printed no stack: {out.stdout[:200]!r}") from exc
    return parse_dump(data, pid)


def main_frames(pid: int, *flags: str) -> list[dict[str, Any]] | None:
    """The main thread's frames of ``pid`` as py-spy's JSON gives them (innermost first),
    read with ``flags`` (``--native``, ``--locals``); None when it could not be read."""
    try:
        out = subprocess.run([find_pyspy(), "dump", *flags, "--json", "--pid", str(pid)],
                             capture_output=True, text=True, timeout=DUMP_TIMEOUT_S,
                             check=False, env=_quiet_env())
        data = json.loads(out.stdout) if out.returncode == 0 else None
    except (OSError, subprocess.SubprocessError, ValueError, StacksError):
        return None
    for thread in data if isinstance(data, list) else []:
        if isinstance(thread, dict) and thread.get("os_thread_id") == pid:
            frames = thread.get("frames")
            return [f for f in frames if isinstance(f, dict)] if isinstance(frames, list) \
                else None
    return None


def complaint(text: str) -> str:
    """py-spy's error in one line: its ``Error:`` sentence and the deepest cause under
    ``Caused by:`` ("Failed to get process executable name. ...: Permission denied (os error
    13)"); any other output's last line. A backtrace (``RUST_BACKTRACE``) is left out."""
    lines = [x.strip() for x in text.partition("Stack backtrace:")[0].splitlines()]
    lines = [x for x in lines if x]
    if not lines:
        return "py-spy failed"
    error = next((x[len("Error:"):].strip() for x in lines if x.startswith("Error:")), None)
    causes = [x.split(":", 1)[1].strip() for x in lines if x[:1].isdigit() and ":" in x]
    if error is None:
        return lines[-1]
    return f"{error.rstrip('.')}: {causes[-1]}" if causes and causes[-1] not in error else error


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
        # A rank paused under the debugger: its frames above the user's are the debugger's.
        frames = frames[debugger_cut([f.file for f in frames]):]
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

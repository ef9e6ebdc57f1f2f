"""Who this rank is and what it tells its supervisor: its state (rank, where it listens,
whether a client is attached), its node and role, and ``send``, a report on the job's
control socket (``RANKDEBUG_CTL``), or in the registry where there is none. The rest of the
rank's debugger (``debug``, ``debugpy_start``) reports through it.

Pure Python, 3.9 and later.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading

from rankdebug.runtime import marks, wire

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class _State:
    """What this rank's debugger knows of itself (one per process)."""

    rank = 0
    local_rank: int | None = None
    world_size: int | None = None
    listening: tuple[str, int] | None = None
    attached = False
    ctl: socket.socket | None = None
    job = ""
    lock = threading.Lock()
    pid = 0
    pause = False  # the client asked for a pause before the rank was traced
    waiting = False  # reading the supervisor's first reply (the client's breakpoints)
    attach_asked = False  # the attach signal came while waiting


state = _State()

def setting(name: str, default: str = "") -> str:
    """A ``RANKDEBUG_*`` setting of this rank (its environment)."""
    return os.environ.get(name, default)


def trace(what: str) -> None:
    """A phase of this rank's debug start (``marks``: RANKDEBUG_TRACE_FILE)."""
    marks.mark(f"rank {state.rank}", what)


_node: list[str] = []


def node() -> str:
    """``nodeN`` on another node of the job than the supervisor's (``launch --hosts``);
    empty on the supervisor's."""
    if not _node:
        name = setting("RANKDEBUG_NODE")
        if not name and setting("RANKDEBUG_NODES"):
            here = socket.gethostname()
            for item in setting("RANKDEBUG_NODES").split(","):
                host, _, label = item.partition(":")
                if host == here:
                    name = label
                    break
        _node.append(name)
    return _node[0]


_role: list[str] = []


def role() -> str:
    """A Ray actor's role, from the title Ray gives its worker process
    (``ray::critic_0:CriticWorker.update``): the class's words, a last ``Worker`` left out
    (``critic``; verl's ``ActorRolloutRefWorker``: ``actor/rollout/ref``). Empty elsewhere,
    and before the actor is made (``ray::IDLE``)."""
    if _role:
        return _role[0]
    if "ray" not in sys.modules:
        return ""
    try:
        with open("/proc/self/cmdline", "rb") as f:
            title = f.read(512).split(b"\0", 1)[0].decode("utf-8", "replace")
    except OSError:
        return ""
    if not title.startswith("ray::"):
        return ""
    name = title[5:].split(".", 1)[0].rsplit(":", 1)[-1]
    import re

    words = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+", name)
    if len(words) > 1 and words[-1] == "Worker":
        words.pop()
    found = "/".join(w.lower() for w in words)[:40]
    if found and name not in ("IDLE", "idle"):
        _role.append(found)
        return found
    return ""


def send(event: str, **fields: Any) -> None:
    """Report to the supervisor (a JSON line on its control socket) and the registry."""
    fields.update(event=event, rank=state.rank, pid=os.getpid())
    said_role = role() if event in ("adapter", "attached", "raised", "listening") else ""
    if said_role:
        fields["role"] = said_role  # known once the rank runs an actor's method
    node_name = node()  # another node of the job (``rankdebug launch --hosts``)
    if node_name:
        fields["node"] = node_name
    if state.ctl is not None:
        data = wire.encode(fields)
        with state.lock:
            try:
                state.ctl.sendall(data)
            except OSError:
                state.ctl = None
        return
    job = state.job
    if not job:
        return
    from rankdebug.runtime import registry

    if event == "exit":
        with contextlib.suppress(OSError, registry.RegistryError):
            registry.remove_rank(job, state.rank)
        return
    entry = {k: v for k, v in fields.items() if k not in ("event", "rank")}
    entry["state"] = {"started": "running"}.get(event, event)
    # Guest code: a registry that cannot be written must not fail the user's script.
    with contextlib.suppress(Exception):
        registry.update_rank(job, state.rank, **entry)


def connect_ctl() -> None:
    path = setting("RANKDEBUG_CTL")
    if not path:
        return
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        return
    state.ctl = sock

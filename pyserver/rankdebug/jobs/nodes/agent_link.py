"""This machine's side of the hosts' warm agents (``node_agent``): where each is reached
here, starting one and forwarding its socket, asking it a verb.

The socket here is ``agent-TAG.sock`` in the registry's private folder (TAG: the host and
the SSH options), forwarded (``ssh -O forward -L``) through the SSH connection the verbs
share with that host; the one there is ``agent-VERSION.sock`` in the user's private folder
on the host. A forward that is gone (its connection ended after ``ControlPersist``) is made
again; an agent that cannot be had leaves the verb to a plain SSH run (``across.run_once``).
``across`` passes in what it knows of the host: the ``ssh`` words, how to start the agent.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass

START_S = 30.0


@dataclass(frozen=True)
class Host:
    """How one host is reached: ``ssh`` with its options (the host name last), the
    version key of this rankdebug, and how the agent is started there (its path there
    printed on success)."""

    ssh: list[str]
    key: str
    start: Callable[[], subprocess.CompletedProcess[str]]


class NoAnswer(TimeoutError):
    """The agent took the question but gave no answer in time."""


def _here_path(host: Host) -> str | None:
    from rankdebug.runtime import registry

    try:
        folder = registry.root()
    except (OSError, registry.RegistryError):
        return None
    tag = hashlib.sha256(repr((host.ssh, host.key)).encode())
    return os.path.join(folder, f"agent-{tag.hexdigest()[:12]}.sock")


def _start(host: Host, here: str) -> bool:
    """Start (or find) the host's agent and forward its socket to ``here``."""
    try:
        got = host.start()
    except (OSError, RuntimeError, subprocess.SubprocessError):
        return False
    there = got.stdout.strip().splitlines()[-1:] if got.returncode == 0 else []
    if not there or not there[0].startswith("/"):
        return False
    spec = f"{here}:{there[0]}"
    base, name = host.ssh[:-1], host.ssh[-1]
    try:
        # A forward the connection still holds for a socket that is gone: cancelled first.
        subprocess.run([*base, "-O", "cancel", "-L", spec, name], check=False,
                       capture_output=True, timeout=START_S)
        with contextlib.suppress(FileNotFoundError):
            os.remove(here)
        done = subprocess.run([*base, "-O", "forward", "-L", spec, name], check=False,
                              capture_output=True, timeout=START_S)
    except (OSError, subprocess.TimeoutExpired):
        return False
    # Another verb may have forwarded it meanwhile: what counts is that it answers.
    return done.returncode == 0 or os.path.exists(here)


class _Gone(OSError):
    """The forward or the agent is not there (any more): start it again."""


def _ask(path: str, verb: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(5.0)
        try:
            s.connect(path)
        except (FileNotFoundError, ConnectionRefusedError) as exc:
            raise _Gone(str(exc)) from exc
        s.settimeout(timeout)
        data = bytearray()
        try:
            s.sendall((json.dumps({"argv": verb}) + "\n").encode())
            while not data.endswith(b"\n"):
                got = s.recv(1 << 20)
                if not got:  # the forward's far end could not reach the agent
                    raise _Gone("no answer")
                data += got
        except (ConnectionResetError, BrokenPipeError) as exc:
            raise _Gone(str(exc)) from exc
    reply = json.loads(data)
    return subprocess.CompletedProcess(["rankdebug", *verb], int(reply.get("code", 1)),
                                       str(reply.get("stdout", "")),
                                       str(reply.get("stderr", "")))


def ask(host: Host, verb: list[str], timeout: float
        ) -> subprocess.CompletedProcess[str] | None:
    """The verb's run on the host through its agent; None where no agent can be had (the
    caller runs it over SSH instead). No answer within ``timeout`` raises NoAnswer."""
    here = _here_path(host)
    if here is None or os.environ.get("RANKDEBUG_NO_AGENT"):
        return None
    deadline = time.monotonic() + timeout
    for attempt in range(2):
        if attempt and not _start(host, here):
            return None
        try:
            return _ask(here, verb, max(1.0, deadline - time.monotonic()))
        except _Gone:
            continue
        except TimeoutError as exc:
            raise NoAnswer(f"no answer in {timeout:.0f} s (the agent there was asked: "
                           f"rankdebug {verb[0]})") from exc
        except (OSError, ValueError):
            return None
    return None

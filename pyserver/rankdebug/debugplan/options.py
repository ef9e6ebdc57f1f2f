"""How a job is debugged, apart from which ranks: the knobs ``rankdebug launch`` takes as
flags and the editor as settings, and the ``FILE:LINE`` breakpoints known at start."""

from __future__ import annotations

import math
import os
import socket
from dataclasses import dataclass
from typing import Literal, get_args

from rankdebug.errors import BadInput
from rankdebug.ssh import check_hosts

DEFAULT_TIMEOUT_S = 86400.0
DEFAULT_HANG_S = 120.0  # no rank progressed for this long: the job is said to hang
LOOPBACK = "127.0.0.1"
AttachMode = Literal["auto", "start", "hit"]
StopMode = Literal["together", "alone"]
STOP_MODES: tuple[StopMode, ...] = get_args(StopMode)


@dataclass(frozen=True)
class LaunchOptions:
    host: str = LOOPBACK
    # First port to try for the chosen ranks (0: any free port).
    base_port: int = 0
    # Chosen ranks wait for a client before running on.
    wait: bool = True
    # Seconds process-group timeouts are raised to (0: off); None: the default, one day.
    collective_timeout: float | None = None
    # start: debugpy listens before the script runs (traced from the first import); hit:
    # untraced until a breakpoint, Pause or an uncaught exception needs the debugger.
    # auto: hit (start stays as an escape hatch).
    attach: AttachMode = "auto"
    # Every rank serves a control socket (attach, eval, stacks later).
    arm: bool = False
    # ``FILE:LINE`` breakpoints known at start, as given.
    breaks: tuple[str, ...] = ()
    # together: when a chosen rank stops, the other chosen ranks are paused too.
    stop: StopMode = "together"
    # The job's other nodes, reached over SSH (this machine is node 0), and ssh -F.
    hosts: tuple[str, ...] = ()
    ssh_config: str | None = None
    # Seconds without progress in any rank before the job is said to hang (0: not watched).
    hang_seconds: float = DEFAULT_HANG_S

    def __post_init__(self) -> None:
        if self.collective_timeout is not None and not (
                math.isfinite(self.collective_timeout) and self.collective_timeout >= 0):
            raise BadInput("--collective-timeout must be 0 (off) or more seconds")
        if not 0 <= self.base_port <= 65535:
            raise BadInput(f"--base-port must be 0 (any free port) or a port from 1 to "
                           f"65535, not {self.base_port}")
        check_hang(self.hang_seconds)
        check_host(self.host)
        check_hosts(self.hosts)
        for value in self.breaks:
            parse_break(value)

    @property
    def timeout(self) -> float:
        return DEFAULT_TIMEOUT_S if self.collective_timeout is None else self.collective_timeout

    @property
    def attach_mode(self) -> Literal["start", "hit"]:
        """The mode the ranks run in: ``auto`` decided."""
        return "start" if self.attach == "start" else "hit"


def check_hang(seconds: float) -> None:
    if not (math.isfinite(seconds) and (seconds == 0 or seconds >= 1)):
        raise BadInput(f"--hang-seconds must be 0 (off) or at least 1 second, not {seconds:g}")


def parse_hang(text: str) -> float:
    """``--hang-seconds``' value: seconds (0: off); BadInput for anything else."""
    try:
        seconds = float(text)
    except ValueError:
        raise BadInput(f"--hang-seconds must be 0 (off) or at least 1 second, not "
                       f"{text!r}") from None
    check_hang(seconds)
    return seconds


def check_host(host: str) -> None:
    """An address the ranks can listen on, or BadInput saying why not."""
    try:
        socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise BadInput(f"--host {host!r} is not an address to listen on: {reason}") from None


def parse_break(value: str) -> tuple[str, int]:
    """``FILE:LINE`` → (FILE, LINE); raises BadInput for anything else."""
    path, sep, line = value.rpartition(":")
    if not sep or not path or not line.isdigit() or int(line) < 1:
        raise BadInput(f"breakpoints take FILE:LINE, not {value!r}")
    return path, int(line)


def resolve_breaks(values: tuple[str, ...], cwd: str) -> list[tuple[str, int]]:
    """The breakpoints with real paths (relative ones against ``cwd``)."""
    out = []
    for value in values:
        path, line = parse_break(value)
        out.append((os.path.realpath(os.path.join(cwd, path)), line))
    return out

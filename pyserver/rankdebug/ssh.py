"""SSH as rankdebug uses it to reach a job's other hosts (``--hosts``): host names, the
``ssh`` argv, and where the user's private folder is on a host. One home for all three:
``launch --hosts`` (supervise/nodes/remote.py) and ``jobs|stacks|attach --hosts``
(jobs/nodes/across.py)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rankdebug.errors import BadInput

# In the environment of a job's ssh processes, = the job's id: the janitor (a light
# process started with every launch) finds them without importing supervise/nodes/remote.py.
SSH_MARK = "RANKDEBUG_SSH_OF"

# The registry root on a host, as ``runtime.registry.root`` finds it here, into ``$r``.
PRIVATE_ROOT_SH = ('r="${XDG_RUNTIME_DIR:-}"; if [ -n "$r" ] && [ -d "$r" ] && [ -w "$r" ]; '
                   'then r="$r/rankdebug"; else r="/tmp/rankdebug-$(id -u)"; fi; ')


def is_host(name: str) -> bool:
    """A name ssh takes as a host, never as an option or as two words."""
    return bool(name) and not name.startswith("-") and not any(
        c.isspace() or c == "," for c in name)


def check_hosts(names: Iterable[str]) -> tuple[str, ...]:
    """The names, stripped; raises BadInput naming the first that is not a host name."""
    hosts = tuple(h.strip() for h in names)
    for host in hosts:
        if not is_host(host):
            raise BadInput(f"--hosts: {host!r} is not a host name")
    return hosts


def parse_hosts(text: str | None) -> tuple[str, ...]:
    """``--hosts a,b`` → ("a", "b"); raises BadInput."""
    return check_hosts(h for h in (text or "").split(",") if h.strip())


@dataclass(frozen=True)
class SshOptions:
    config: str | None = None  # ssh -F
    options: tuple[str, ...] = ()  # ssh -o, each "Key=Value"

    def base(self) -> list[str]:
        """``ssh`` and its options, before the host: the user's, then ours (for each option
        ssh keeps the first value it is given). No password prompt can be answered here;
        keep-alives notice a dead host."""
        argv = ["ssh"]
        if self.config:
            argv += ["-F", self.config]
        for opt in self.options:
            argv += ["-o", opt]
        return [*argv, "-o", "BatchMode=yes", "-o", "ConnectTimeout=10",
                "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3"]

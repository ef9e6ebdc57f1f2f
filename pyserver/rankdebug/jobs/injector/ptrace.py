"""May this process ptrace another one? If not, why, and what the user can do about it.

Both ``rankdebug attach --pid`` (gdb, through debugpy) and ``rankdebug stacks`` (py-spy)
read or change another process with ptrace. Linux says no when the Yama security module's
``kernel.yama.ptrace_scope`` forbids it, when the process belongs to another user, or when
a container runs without ``CAP_SYS_PTRACE`` (Docker's default) or with a seccomp profile
that blocks ptrace.
"""

from __future__ import annotations

import os

from rankdebug.jobs import procfs

YAMA = "/proc/sys/kernel/yama/ptrace_scope"

_SYSCTL_FIX = (
    "allow it until the next reboot with `sudo sysctl -w kernel.yama.ptrace_scope=0` "
    "(for good: `echo kernel.yama.ptrace_scope=0 | sudo tee /etc/sysctl.d/10-ptrace.conf`), "
    "or give rankdebug's Python the capability: "
    "`sudo setcap cap_sys_ptrace+ep $(readlink -f $(which python))`"
)
CONTAINER_FIX = (
    "in a container, start it with `--cap-add=SYS_PTRACE` (Docker/Podman; Kubernetes: "
    "securityContext.capabilities.add: [SYS_PTRACE]) and, on old Docker, "
    "`--security-opt seccomp=unconfined`"
)


def yama_scope() -> int | None:
    data = procfs.read(YAMA)
    try:
        return int(data.strip()) if data else None
    except ValueError:
        return None


def _is_descendant(pid: int) -> bool:
    me = os.getpid()
    seen = 0
    while pid > 1 and seen < 64:
        parent = procfs.ppid(pid)
        if parent is None:
            return False
        if parent == me:
            return True
        pid = parent
        seen += 1
    return False


def diagnose(pid: int, *, scope: int | None = -1, cap: bool | None = None) -> str | None:
    """Why ptrace of ``pid`` will fail (with the fix), or None when nothing forbids it that we
    can see. ``scope``/``cap`` override what this machine says (for tests)."""
    scope = yama_scope() if scope == -1 else scope
    cap = procfs.cap_sys_ptrace() if cap is None else cap
    st = procfs.status(pid)
    if st is not None and st.uid != os.getuid() and not cap:
        return (f"process {pid} belongs to another user (uid {st.uid}); "
                "rankdebug only works on your own processes")
    if scope == 3:
        return ("ptrace is switched off on this machine (kernel.yama.ptrace_scope = 3); "
                "only a reboot with another setting allows it")
    if scope == 2 and not cap:
        return ("ptrace is allowed to administrators only (kernel.yama.ptrace_scope = 2); "
                "run as root, or " + _SYSCTL_FIX)
    if scope == 1 and not cap and not _is_descendant(pid):
        return ("ptrace is not permitted: kernel.yama.ptrace_scope = 1 lets a process trace "
                "only its own children, and this process did not start "
                f"{pid}; " + _SYSCTL_FIX)
    return None


def explain_failure(pid: int, output: str) -> str | None:
    """A clear message for a ptrace refusal seen in gdb's or py-spy's output, else None."""
    low = output.lower()
    if "operation not permitted" not in low and "permission denied" not in low:
        return None
    return refused(pid)


def refused(pid: int) -> str:
    """Why ptrace of ``pid`` was refused (it was), with the fix."""
    return diagnose(pid) or ("ptrace is not permitted here (Operation not permitted) "
                             "although kernel.yama.ptrace_scope allows it: " + CONTAINER_FIX)

"""The job's janitor: what is left to do when ``rankdebug launch`` is killed outright.

SIGKILL (``kill -9``, the OOM killer) gives the supervisor no chance to clean up. The
launcher gets the parent-death signal and debugpy's adapters watch the supervisor, but a rank
that ignores SIGTERM, or one torchrun had no time to end, would run on, and the job's
registry folder would stay until the next launch pruned it. So the supervisor starts this
script first: its own session, standard library only, holding the read end of a pipe whose
write end only the supervisor has. End of file on it means the supervisor is gone, however
it ended. After a clean end the job's folder is gone already and the janitor just exits;
otherwise it ends every process of this user's that carries the job's id (SIGTERM, then
SIGKILL after ``GRACE_S``), removes the folder, and says so on the supervisor's stderr.

    python -S janitor.py FD JOB JOB_DIR SUPERVISOR_PID
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import time

GRACE_S = 2.0


def job_pids(job: str) -> list[int]:
    """Live processes of this user whose environment has ``RANKDEBUG_JOB=job``."""
    needle = f"RANKDEBUG_JOB={job}".encode()
    me, uid = os.getpid(), os.getuid()
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            if os.stat(f"/proc/{name}").st_uid != uid:
                continue
            with open(f"/proc/{name}/environ", "rb") as f:
                env = f.read()
        except OSError:
            continue  # gone, or a zombie (its environment reads empty)
        if env and needle in env.split(b"\0"):
            out.append(int(name))
    return out


def _signal(pids: list[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, sig)


def clean_up(job: str, folder: str, supervisor: int) -> str | None:
    """End the job's processes and remove its folder; what was done, or None if nothing
    was left (the supervisor ended cleanly)."""
    left = job_pids(job)
    if not left and not os.path.isdir(folder):
        return None
    _signal(left, signal.SIGTERM)
    deadline = time.monotonic() + GRACE_S
    while time.monotonic() < deadline and job_pids(job):
        time.sleep(0.05)
    stubborn = job_pids(job)
    _signal(stubborn, signal.SIGKILL)
    shutil.rmtree(folder, ignore_errors=True)
    ended = f"ended its {len(left)} process(es)" if left else "no process was left"
    hard = f" ({len(stubborn)} with SIGKILL)" if stubborn else ""
    return (f"rankdebug: the supervisor (rankdebug launch, pid {supervisor}) of job {job} "
            f"ended without cleaning up (killed outright?); {ended}{hard} and removed its "
            f"registry folder")


def main(argv: list[str]) -> int:
    fd, job, folder, supervisor = int(argv[0]), argv[1], argv[2], int(argv[3])
    with contextlib.suppress(OSError):
        while os.read(fd, 4096):
            pass
    said = clean_up(job, folder, supervisor)
    if said is not None:
        with contextlib.suppress(OSError):
            sys.stderr.write(said + "\n")
            sys.stderr.flush()
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C is the supervisor's to handle
    sys.exit(main(sys.argv[1:]))

"""The job's janitor: what is left to do when ``rankdebug launch`` is killed outright.

SIGKILL (``kill -9``, the OOM killer) gives the supervisor no chance to clean up. The
launcher gets the parent-death signal and debugpy's adapters watch the supervisor, but a rank
that ignores SIGTERM, or one torchrun had no time to end, would run on, and the job's
registry folder would stay until the next launch pruned it. So the supervisor starts this
first: a process of its own session holding the read end of a pipe whose write end only the
supervisor has. End of file on it means the supervisor is gone, however it ended. After a
clean end the job's folder is gone already and the janitor just exits; otherwise it ends
every process that carries the job's id (as the supervisor's own stop does) and the job's
SSH connections to its other nodes (whose runners then end the job there), removes the
folder, and says so on the supervisor's stderr.

    python -m rankdebug.supervise.janitor FD JOB JOB_DIR SUPERVISOR_PID
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys

from rankdebug.ssh import SSH_MARK
from rankdebug.supervise import procs

GRACE_S = 2.0
CLEAN = b"clean"  # what the supervisor writes once its own clean-up is done


def clean_up(job: str, folder: str, supervisor: int) -> str | None:
    """End the job's processes and remove its folder; what was done, or None if nothing
    was left (the supervisor ended cleanly)."""
    def find() -> list[int]:  # the job's processes, and its SSH connections to other nodes
        return procs.with_env("RANKDEBUG_JOB", job) + procs.with_env(SSH_MARK, job)

    left = procs.alive(find())
    if not left and not os.path.isdir(folder):
        return None
    survivors = procs.end_all(find, None, GRACE_S)
    shutil.rmtree(folder, ignore_errors=True)
    ended = f"ended its {len(left)} process(es)" if left else "no process was left"
    still = f" ({len(survivors)} still alive after SIGKILL)" if survivors else ""
    return (f"rankdebug: the supervisor (rankdebug launch, pid {supervisor}) of job {job} "
            f"ended without cleaning up (killed outright?); {ended}{still} and removed its "
            f"registry folder")


def main(argv: list[str]) -> int:
    fd, job, folder, supervisor = int(argv[0]), argv[1], argv[2], int(argv[3])
    heard = b""
    with contextlib.suppress(OSError):
        while chunk := os.read(fd, 4096):
            heard = (heard + chunk)[-64:]
    if CLEAN in heard:
        return 0  # the supervisor ended the job itself (and said what it could not do)
    said = clean_up(job, folder, supervisor)
    if said is not None:
        with contextlib.suppress(OSError):
            sys.stderr.write(said + "\n")
            sys.stderr.flush()
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C is the supervisor's to handle
    sys.exit(main(sys.argv[1:]))

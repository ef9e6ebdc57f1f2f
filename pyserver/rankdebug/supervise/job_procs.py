"""The job's processes, from start to a clean end: the launcher, started in a session of its
own with this process as child subreaper (so that debugpy's daemonized adapters and the
ranks of a dead launcher re-parent here); the janitor (``janitor.py``), which cleans up
should this process be killed outright; the other nodes' parts (``nodes``); and the end
of every process the job left (SIGTERM, SIGKILL after a grace period)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys

from rankdebug.runtime import marks
from rankdebug.supervise import janitor, procs
from rankdebug.supervise.adapters import with_rankdebug_on_path
from rankdebug.supervise.hub import Hub
from rankdebug.supervise.nodes.watch import Nodes

STOP_GRACE_S = 2.5  # SIGTERM -> SIGKILL; the whole stop stays under 5 s


class JobProcesses:
    def __init__(self, hub: Hub, nodes: Nodes, control: bool) -> None:
        self.hub = hub
        self.nodes = nodes
        self.control = control  # read JSON commands from stdin (the job gets /dev/null)
        self.proc: subprocess.Popen[bytes] | None = None  # the launcher
        self._janitor: subprocess.Popen[bytes] | None = None
        self._janitor_fd: int | None = None

    def start(self) -> None:
        """Start the janitor, then the job (on every node)."""
        procs.become_subreaper()
        self._start_janitor()
        plan = self.hub.plan
        stdout = sys.stderr.fileno() if self.hub.json_mode else None
        self.nodes.start_before(stdout)
        marks.mark("launch", "spawn")
        self.proc = subprocess.Popen(
            [_executable(plan.argv[0], plan.env), *plan.argv[1:]],
            env=plan.env,
            cwd=plan.cwd,
            stdin=subprocess.DEVNULL if self.control else None,
            stdout=stdout,
            start_new_session=True,
            # No other thread runs yet (the control socket's starts later), so a
            # preexec_fn is safe here.
            preexec_fn=procs.parent_death_signal(signal.SIGTERM),  # noqa: PLW1509
        )
        self.nodes.start_after(stdout)

    def _start_janitor(self) -> None:
        """The janitor: it cleans up if this process is killed outright. The pipe's write
        end stays here, open until this process ends however it ends."""
        read_end, self._janitor_fd = os.pipe()
        try:
            self._janitor = subprocess.Popen(
                [sys.executable, "-m", "rankdebug.supervise.janitor", str(read_end),
                 self.hub.job, self.hub.job_dir, str(os.getpid())],
                env=with_rankdebug_on_path(dict(os.environ)), pass_fds=(read_end,),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, start_new_session=True)
        except OSError as exc:
            self.hub.say(f"no janitor ({exc}): a kill -9 of this process would leave the job")
        finally:
            os.close(read_end)

    def job_processes(self) -> list[int]:
        me = os.getpid()
        found = set(procs.descendants(me))
        found.update(procs.with_env("RANKDEBUG_JOB", self.hub.job))
        found.discard(me)
        if self._janitor is not None:  # it ends on its own once this process has ended
            found.discard(self._janitor.pid)
        return sorted(found)

    def end_all(self) -> None:
        self.nodes.stop()  # their runners end the job there as this one ends here
        keep = self.proc.pid if self.proc is not None else None
        left = procs.end_all(self.job_processes, keep, STOP_GRACE_S)
        if left:
            self.hub.say(f"processes still alive after SIGKILL: {left}")

    def end(self) -> None:
        """The job is over: end what is left of it, here and on the other nodes."""
        if self.proc is not None and self.proc.poll() is None:
            self.end_all()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=1.0)
        # Whatever the launcher left behind: debugpy adapters, orphaned ranks.
        if self.job_processes():
            self.end_all()
        self.nodes.close()
        procs.reap(None)

    def ended_cleanly(self) -> None:
        """Everything is cleaned up: the janitor has nothing to do."""
        if self._janitor_fd is not None:
            with contextlib.suppress(OSError):
                os.write(self._janitor_fd, janitor.CLEAN)


def _executable(name: str, env: dict[str, str]) -> str:
    """``name`` as the job's PATH finds it; else the one beside this Python (``torchrun``
    of the virtual environment rankdebug runs from, when that is not activated)."""
    if os.sep in name or shutil.which(name, path=env.get("PATH", os.defpath)):
        return name
    beside = os.path.join(os.path.dirname(sys.executable), name)
    return beside if os.access(beside, os.X_OK) else name

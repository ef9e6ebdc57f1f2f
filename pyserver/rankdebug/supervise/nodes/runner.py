"""The job's part on another node: started there over SSH by ``rankdebug launch --hosts``.

    PYTHONPATH=BOOT python -m rankdebug.supervise.nodes.runner   (a JSON line on stdin)

The first line on stdin says what to run: ``{"argv", "env", "cwd", "dir"}`` (``env``: the
variables to set on top of this node's own environment). The command runs in a session of
its own, this process a child subreaper (debugpy's daemonized adapters re-parent here).
The rest of stdin is the SSH channel to the supervisor: its end of file, however the
supervisor or its connection ended, ends every process of the job on this node (SIGTERM,
SIGKILL after a grace period), as do SIGTERM, SIGHUP and SIGINT; then the job's folder
here (``dir``: the boot folder, the forwarded control socket) is removed. The exit status
is the command's. Nothing of rankdebug is left on the node.

``"argv": null``: the launcher on the first node starts this node's ranks itself (srun,
mpirun): nothing is started here; the runner waits for its channel's end and then ends the
job's processes on this node (those whose environment carries the job's id), the job's
folder with them.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading

from rankdebug.supervise import procs

GRACE_S = 2.5


class _Node:
    def __init__(self, spec: dict[str, object]) -> None:
        argv = spec.get("argv")
        self.argv = [str(a) for a in argv] if isinstance(argv, list) else None
        self.parent = bool(spec.get("parent", True))
        extra = spec.get("env") or {}
        self.env = dict(os.environ, **{str(k): str(v) for k, v in extra.items()})  # type: ignore[attr-defined]
        self.cwd = str(spec.get("cwd") or os.getcwd())
        self.dir = str(spec.get("dir") or "")
        self.job = self.env.get("RANKDEBUG_JOB", "")
        self.node = self.env.get("RANKDEBUG_NODE", "")
        self.proc: subprocess.Popen[bytes] | None = None
        self.stopping = threading.Event()
        self.done = threading.Event()

    def find(self) -> list[int]:
        found = set(procs.descendants(os.getpid()))
        if self.job and self.argv is None:  # the launcher's ranks (this node is not node 0)
            found.update(procs.with_env("RANKDEBUG_JOB", self.job))
        elif self.job and self.node:  # escaped ones; this node's only (a node may be this one)
            found.update(set(procs.with_env("RANKDEBUG_JOB", self.job))
                         & set(procs.with_env("RANKDEBUG_NODE", self.node)))
        found.discard(os.getpid())
        return sorted(found)

    def stop(self) -> None:
        if self.stopping.is_set():
            return
        self.stopping.set()
        keep = self.proc.pid if self.proc is not None else None
        procs.end_all(self.find, keep, GRACE_S)
        self.done.set()

    def run(self) -> int:
        procs.become_subreaper()
        if self.argv is None:  # until the channel ends or a signal comes, then stop()
            threading.Thread(target=self._watch_channel, daemon=True).start()
            self.done.wait()
            procs.reap(None)
            return 0
        try:
            self.proc = subprocess.Popen(self.argv, env=self.env, cwd=self.cwd,
                                         stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as exc:
            sys.stderr.write(f"rankdebug: cannot start {self.argv[0]!r} on this node: "
                             f"{exc.strerror or exc}\n")
            return 127 if isinstance(exc, FileNotFoundError) else 126
        threading.Thread(target=self._watch_channel, daemon=True).start()
        code = self.proc.wait()
        # What the command left (adapters, orphaned ranks) goes with it.
        if self.find():
            self.stop()
        procs.reap(None)
        return code if code >= 0 else 128 - code

    def _watch_channel(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            while os.read(sys.stdin.fileno(), 65536):
                pass
        self.stop()


def _first_line() -> bytes:
    """The job's description, read byte by byte: nothing of the channel after it is taken
    into a buffer (the watcher reads the descriptor itself)."""
    out = bytearray()
    while not out.endswith(b"\n"):
        got = os.read(sys.stdin.fileno(), 1)
        if not got:
            break
        out += got
    return bytes(out)


def main() -> int:
    line = _first_line()
    try:
        spec = json.loads(line.decode("utf-8"))
    except ValueError:
        sys.stderr.write("rankdebug: node runner: no job description on stdin\n")
        return 2
    node = _Node(spec)
    for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(s, lambda *_: threading.Thread(target=node.stop, daemon=True).start())
    try:
        return node.run()
    finally:
        if node.dir:
            shutil.rmtree(node.dir, ignore_errors=True)
            if node.parent:  # the job's folder, once no node uses it
                with contextlib.suppress(OSError):
                    os.rmdir(os.path.dirname(node.dir))


if __name__ == "__main__":
    sys.exit(main())

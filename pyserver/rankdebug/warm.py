"""A ``rankdebug launch`` started ahead of its job, so that no interpreter starts and no
module loads between the editor's Enter and the job's start.

The editor starts ``rankdebug launch`` with ``RANKDEBUG_WARM=FD`` while the user still picks
ranks: the process loads what a launch needs, then waits on file descriptor FD (a pipe)
for one JSON object, ``{"argv": ["launch", ...], "env": {...}, "cwd": "..."}``, and runs
it as if it had been started with that argv, environment and folder. stdin, stdout, stderr,
the pid and the signals are the process's own from its start, so the editor keeps them as
for a job it starts itself. EOF with nothing read (the editor let it go): it exits 0.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Sequence

ENV = "RANKDEBUG_WARM"


def _preload() -> None:
    """What a launch loads on its way: the planner and its shell grammar, the supervisor."""
    from rankdebug.command import plan_argv, plan_text
    from rankdebug.supervise import cli  # noqa: F401  (the supervisor and what it loads)

    plan_text("torchrun --nproc_per_node 2 train.py", 1, language="shell")
    plan_argv(["python", "train.py"])


def _read(fd: int) -> bytes:
    chunks: list[bytes] = []
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def serve(fd_text: str, run: Callable[[Sequence[str]], int]) -> int:
    """Wait for the launch to run, then ``run`` its argv (``rankdebug.cli.main``, passed in:
    this module sits beside the CLI, which calls it); its exit status."""
    try:
        fd = int(fd_text)
    except ValueError:
        print(f"rankdebug launch: {ENV} must name a file descriptor, not {fd_text!r}",
              file=sys.stderr)
        return 2
    _preload()
    try:
        data = _read(fd)
        os.close(fd)
    except OSError as exc:
        print(f"rankdebug launch: {ENV}: cannot read descriptor {fd}: {exc.strerror}",
              file=sys.stderr)
        return 2
    if not data.strip():
        return 0
    try:
        req = json.loads(data)
        argv, env, cwd = req["argv"], req["env"], req["cwd"]
        if not (isinstance(argv, list) and all(isinstance(a, str) for a in argv)
                and argv[:1] == ["launch"] and isinstance(env, dict) and isinstance(cwd, str)
                and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())):
            raise TypeError("argv (launch ...), env and cwd")
    except (ValueError, KeyError, TypeError) as exc:
        print(f"rankdebug launch: {ENV}: a bad request ({exc})", file=sys.stderr)
        return 2
    os.environ.clear()
    os.environ.update(env)
    try:
        os.chdir(cwd)
    except OSError as exc:
        print(f"rankdebug launch: cannot run in {cwd}: {exc.strerror}", file=sys.stderr)
        return 2
    return run(argv)

"""A warm rankdebug on each of a job's other hosts, for the ``--hosts`` verbs.

``rankdebug jobs|stacks|eval|diagnose --hosts a,b`` asks each host for its part of the job.
Starting ``python -m rankdebug VERB`` there for every question costs an SSH session, a
Python start and the imports on every host, each time: with many nodes (and Training Jobs
asking every few seconds) that, not the ranks, is the bill. So the first question starts
this agent on the host (over the SSH connection the verbs share), which imports the verbs
once and answers each question in a child forked from it; this machine reaches it through
a Unix socket forwarded over that same connection. Both sockets are in the user's private
folders (0700): only the user reaches the agent, as only the user reaches the ranks.

    python -m rankdebug.jobs.nodes.node_agent start PATH   prints PATH once an agent listens there

A question is one JSON line ``{"argv": ["stacks", JOB, "--json", …]}`` (a reading verb);
the answer one JSON line ``{"code", "stdout", "stderr"}``. The agent ends after ``IDLE_S``
without a question; a newer rankdebug uses a socket of its own (the path names the version).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import os
import signal
import socket
import sys
from typing import Any

from rankdebug.runtime import peercred
from rankdebug.runtime.serve import Door, Loop, Server

IDLE_S = 300.0
READ_S = 10.0  # for the question's line, once connected
# What it answers (readers, never launch), as ``rankdebug.cli``'s verb table names them.
VERBS = {"jobs": "rankdebug.jobs.cli_jobs", "stacks": "rankdebug.jobs.cli_stacks",
         "eval": "rankdebug.jobs.cli_eval", "diagnose": "rankdebug.jobs.diagnose.cli"}


def _run(argv: list[str]) -> int:
    """``rankdebug VERB ARGS…`` as ``rankdebug.cli.main`` runs a verb."""
    from rankdebug.errors import BadInput, report
    from rankdebug.runtime.registry import RegistryError

    module = importlib.import_module(VERBS[argv[0]])
    parser = argparse.ArgumentParser(prog=f"rankdebug {argv[0]}")
    module.add_arguments(parser)
    ns = parser.parse_args(argv[1:])
    try:
        return int(module.run(ns))
    except RegistryError as exc:  # a planted or foreign registry folder: refused, not used
        return report(BadInput(f"job registry: {exc}"),
                      as_json=bool(getattr(ns, "json", False)), prog=f"rankdebug {argv[0]}")


def _answer(argv: list[str]) -> dict[str, Any]:
    """Run the verb here (in the forked child), its output captured."""
    out, err = io.StringIO(), io.StringIO()
    sys.stdout, sys.stderr = out, err
    try:
        code = _run(argv)
    except SystemExit as exc:  # argparse's usage errors
        code = exc.code if isinstance(exc.code, int) else 2
    except Exception as exc:
        err.write(f"rankdebug {argv[0]}: {type(exc).__name__}: {exc}\n")
        code = 1
    finally:
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    return {"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}


def _question(conn: socket.socket) -> list[str] | str:
    """The argv asked for, or why it cannot be answered."""
    conn.settimeout(READ_S)
    data = b""
    while not data.endswith(b"\n"):
        got = conn.recv(65536)
        if not got:
            return "no question"
        data += got
        if len(data) > 1 << 20:
            return "question too long"
    try:
        argv = json.loads(data).get("argv")
    except (ValueError, AttributeError):
        return "not a JSON object"
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        return "argv must be a list of strings"
    if argv[0] not in VERBS:
        return f"{argv[0]!r} is not asked of an agent (only {', '.join(VERBS)})"
    return argv


def _child(conn: socket.socket) -> None:
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the verb waits for its own children
    try:
        argv = _question(conn)
        reply = (_answer(argv) if isinstance(argv, list)
                 else {"code": 2, "stdout": "", "stderr": f"rankdebug agent: {argv}\n"})
        conn.settimeout(None)
        conn.sendall((json.dumps(reply) + "\n").encode())
    except OSError:
        pass
    finally:
        conn.close()


def serve(listener: socket.socket, path: str) -> None:
    """Answer until ``IDLE_S`` pass without a question (or the socket is taken away)."""
    for module in VERBS.values():  # imported once, here: every child starts warm
        with contextlib.suppress(ImportError):
            importlib.import_module(module)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children reaped by the kernel
    # The socket file's own inode (a socket's fstat names another: its sockfs inode), so
    # that the end removes this agent's file and never a newer agent's.
    inode = os.stat(path).st_ino

    def fork(conn: socket.socket, _n: int) -> None:
        if os.fork() == 0:  # the question is answered in a child; the loop goes on at once
            try:
                listener.close()
                _child(conn)
            finally:
                os._exit(0)

    # eval runs code in the ranks: the owner only, even were the folder's or the socket's
    # mode loosened. Removed: a newer agent took over, or it was cleaned up.
    Server(listener, fork, Loop(name="rankdebug-agent", alive=lambda: os.path.exists(path),
                                idle_s=IDLE_S),
           Door(admit=peercred.same_user)).run()
    with contextlib.suppress(OSError):
        if os.stat(path).st_ino == inode:
            os.remove(path)


def alive(path: str, timeout: float = 2.0) -> bool:
    """Whether an agent answers at ``path``."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        try:
            s.connect(path)
        except OSError:
            return False
    return True


def start(path: str) -> int:
    """Listen at ``path`` (unless an agent already does), then serve from a daemon: the
    SSH session that started it returns at once."""
    folder = os.path.dirname(path)
    if not os.path.isdir(folder) or os.stat(folder).st_uid != os.getuid() \
            or os.stat(folder).st_mode & 0o077:
        sys.stderr.write(f"rankdebug agent: {folder} is not a private folder of yours\n")
        return 2
    if alive(path):
        print(path, flush=True)
        return 0
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(path)
    except OSError as exc:  # another start won the race: it serves
        listener.close()
        if alive(path):
            print(path, flush=True)
            return 0
        sys.stderr.write(f"rankdebug agent: cannot listen at {path}: {exc}\n")
        return 1
    os.chmod(path, 0o600)
    listener.listen(64)
    if os.fork():
        print(path, flush=True)
        return 0
    os.setsid()
    if os.fork():
        os._exit(0)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
    with contextlib.suppress(OSError):
        os.chdir(os.path.expanduser("~"))
    try:
        serve(listener, path)
    finally:
        os._exit(0)


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] != "start":
        sys.stderr.write("usage: python -m rankdebug.jobs.nodes.node_agent start PATH\n")
        return 2
    return start(argv[1])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

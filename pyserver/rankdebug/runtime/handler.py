"""Armed ranks (``rankdebug launch --arm``): a control socket per rank that can later start
the debugger, evaluate an expression, or read every thread's stack, without a restart.

Nothing runs until asked: one daemon thread blocks in ``accept()`` on
``<job folder>/rank-N.sock`` (mode 0600 in the 0700 job folder; a peer of another user is
refused), so the rank runs as fast as a plain one. Requests and replies are JSON lines, one
reply per request, several requests per connection:

    {"command": "ping"}                          -> {"event": "armed", "rank", "pid"}
    {"command": "attach"}                        -> {"event": "listening", "host", "port", ...}
    {"command": "eval", "expr": E, "timeout": S} -> {"event": "result", "text", "type"}
    {"command": "stacks"}                        -> {"event": "stacks", "threads": [...]}
    a request that fails                         -> {"event": "error", "message": ...}

A rank held at an uncaught exception (``rankdebug.runtime.hold``) answers too: ``ping``'s
reply carries ``raised`` ({exception, message, file, line, function}), ``eval`` reads the
raising frame's namespace, ``stacks`` gives the held thread the traceback's frames (and
``raised``), and ``attach`` stops it there once the client is configured.

Every connection is served by a thread of its own, so the handler answers while the main
thread waits in a collective (it needs the GIL only for the moment it reads or evaluates).
Pure Python, 3.9 and later; debugpy is imported only by ``attach``.
"""

from __future__ import annotations

import contextlib
import os
import socket
import struct
import sys
import threading

from rankdebug.runtime import wire

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

MAX_TEXT = 100_000  # characters of an eval result sent back (repr of a big tensor)
MAX_REQUEST = 1 << 20


class _Handler:
    sock: socket.socket | None = None
    path = ""
    pid = 0
    rank = 0
    ident: int | None = None
    # Starts the debugger and says where it listens: ``runtime.debug`` passes it in, so
    # the handler never imports the module that starts it.
    attach: Callable[[], dict[str, Any]] | None = None


handler = _Handler()


def socket_path(folder: str, rank: int) -> str:
    return os.path.join(folder, f"rank-{rank}.sock")


def start(folder: str, rank: int,
          attach: Callable[[], dict[str, Any]] | None = None) -> str | None:
    """Listen on the rank's socket in ``folder`` (the job's registry folder) and serve it
    from a daemon thread; returns the socket's path, or None when it cannot be made.
    ``attach`` answers the ``attach`` command (without it, the command is refused)."""
    path = socket_path(folder, rank)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with contextlib.suppress(FileNotFoundError):
            os.remove(path)
        old = os.umask(0o177)  # the file is 0600 from the moment it exists
        try:
            sock.bind(path)
        finally:
            os.umask(old)
        sock.listen(16)
    except OSError as exc:
        sock.close()
        sys.stderr.write(f"rankdebug: rank {rank}: cannot arm the handler at {path}: {exc}\n")
        return None
    handler.sock, handler.path, handler.pid, handler.rank = sock, path, os.getpid(), rank
    handler.attach = attach
    thread = threading.Thread(target=_accept, name="rankdebug-handler", daemon=True)
    thread.pydev_do_not_trace = True  # type: ignore[attr-defined]  # hidden from debugpy
    thread.start()
    handler.ident = thread.ident
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_after_fork_in_child)
    import atexit

    atexit.register(stop)
    return path


def stop() -> None:
    """Close the socket and remove its file (the rank's script has ended)."""
    if os.getpid() != handler.pid or handler.sock is None:
        return
    sock, handler.sock = handler.sock, None
    with contextlib.suppress(OSError):
        os.remove(handler.path)
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)  # wakes the thread in accept(); close alone does not
    with contextlib.suppress(OSError):
        sock.close()


def _after_fork_in_child() -> None:
    # A DataLoader worker inherits the listening socket but not the thread: let it go, so
    # only the rank answers (and the file is the rank's to remove).
    if handler.sock is not None:
        with contextlib.suppress(OSError):
            handler.sock.close()
        handler.sock = None


def _accept() -> None:
    while True:
        sock = handler.sock
        if sock is None:
            return
        try:
            conn, _ = sock.accept()
        except OSError:
            return
        if not _same_user(conn):
            conn.close()
            continue
        thread = threading.Thread(target=_serve, args=(conn,), name="rankdebug-handler-conn",
                                  daemon=True)
        thread.pydev_do_not_trace = True  # type: ignore[attr-defined]
        thread.start()


def _same_user(conn: socket.socket) -> bool:
    peercred = getattr(socket, "SO_PEERCRED", None)
    if peercred is None:
        return True  # not Linux: the 0600 file and 0700 folder are the guard
    try:
        data = conn.getsockopt(socket.SOL_SOCKET, peercred, struct.calcsize("3i"))
    except OSError:
        return False
    _pid, uid, _gid = struct.unpack("3i", data)
    return bool(uid == os.getuid())


def _serve(conn: socket.socket) -> None:
    with conn, conn.makefile("rb") as reader:
        while True:
            try:
                request = wire.read(reader, MAX_REQUEST)
                if request is None:
                    return
                reply = handle(request)
            except ValueError as exc:
                reply = {"event": "error", "message": f"bad request: {exc}"}
            except Exception as exc:  # guest process: a failing request must not kill it
                reply = {"event": "error", "message": f"{type(exc).__name__}: {exc}"}
            reply.setdefault("rank", handler.rank)
            reply.setdefault("pid", os.getpid())
            try:
                wire.send(conn, reply)
            except OSError:
                return


def handle(request: dict[str, Any]) -> dict[str, Any]:
    """One request -> its reply (see the module docstring)."""
    command = request.get("command")
    if command == "ping":
        reply: dict[str, Any] = {"event": "armed"}
        held = _held()
        if held:
            reply["raised"] = dict(held[0].info)
        return reply
    if command == "stacks":
        return {"event": "stacks", "threads": stacks()}
    if command == "eval":
        expr = request.get("expr")
        if not isinstance(expr, str) or not expr.strip():
            return {"event": "error", "message": "eval needs an expression"}
        timeout = request.get("timeout", 10.0)
        if not isinstance(timeout, (int, float)) or timeout <= 0:
            timeout = 10.0
        return evaluate(expr, float(timeout))
    if command == "attach":
        if handler.attach is None:
            return {"event": "error", "message": "this rank cannot start a debugger"}
        return handler.attach()
    return {"event": "error", "message": f"unknown command {command!r}"}


def _own_threads() -> set[int]:
    return {t.ident for t in threading.enumerate()
            if t.ident is not None and t.name.startswith("rankdebug-handler")}


def _held() -> list[Any]:
    """The threads held at an uncaught exception (``hold.Held``), if the module is loaded
    (the hook imports it: no exception, no module)."""
    hold = sys.modules.get("rankdebug.runtime.hold")
    return list(hold.held()) if hold is not None else []


def stacks() -> list[dict[str, Any]]:
    """Every thread's stack but the handler's; a held thread's is its exception's
    traceback (where it raised), not the hook it waits in."""
    from rankdebug.runtime import frames

    threads = frames.thread_stacks(skip=_own_threads())
    held = {h.ident: h for h in _held()}
    for thread in threads:
        one = held.get(thread["thread_id"])
        if one is not None:
            thread["frames"] = one.stack()
            thread["raised"] = dict(one.info)
    return threads


# --- eval -------------------------------------------------------------------------------


def namespace() -> tuple[dict[str, Any], dict[str, Any]]:
    """Where an expression is evaluated: the user's frames on the main thread's stack (of a
    rank held at an exception: the traceback's), the innermost first (its locals win), then
    the ``__main__`` module.

    Returns (globals, locals): the globals of the innermost user frame (or ``__main__``),
    and the merged locals of every user frame.
    """
    from rankdebug.runtime import frames

    main = sys.modules.get("__main__")
    module_globals: dict[str, Any] = dict(vars(main)) if main is not None else {}
    held = _held()
    if held:
        stack = held[0].frames()
    else:
        stack = frames.walk(sys._current_frames().get(threading.main_thread().ident or 0))
    user = [f for f in stack if frames.user_file(f.f_code.co_filename)]
    merged: dict[str, Any] = {}
    for frame in reversed(user):  # outermost first: inner frames overwrite
        merged.update(frame.f_locals)
    globals_ = user[0].f_globals if user else (vars(main) if main is not None else {})
    return globals_, {**module_globals, **merged}


def evaluate(expr: str, timeout: float) -> dict[str, Any]:
    """Evaluate ``expr`` in a thread of its own; its repr, or why not, within ``timeout``."""
    try:
        code = compile(expr.strip(), "<rankdebug eval>", "eval")
    except SyntaxError as exc:
        return {"event": "error",
                "message": f"not an expression: {exc.msg} (column {exc.offset or 0})"}
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            globals_, locals_ = namespace()
            value = eval(code, globals_, locals_)
            text = repr(value)
            if len(text) > MAX_TEXT:
                text = text[:MAX_TEXT] + f"… ({len(text) - MAX_TEXT} more characters)"
            result.update(event="result", text=text, type=type(value).__name__)
        except BaseException as exc:  # SystemExit and friends too: it is the user's text
            result.update(event="error", message=f"{type(exc).__name__}: {exc}")

    worker = threading.Thread(target=run, name="rankdebug-handler-eval", daemon=True)
    worker.pydev_do_not_trace = True  # type: ignore[attr-defined]
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        return {"event": "error",
                "message": f"no result after {timeout:g} s (the expression still runs)"}
    return result

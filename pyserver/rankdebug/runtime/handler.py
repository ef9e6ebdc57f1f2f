"""Armed ranks (``rankdebug launch --arm``): a control socket per rank that can later start
the debugger, evaluate an expression, or read every thread's stack, without a restart.

Nothing runs until asked: one daemon thread blocks in ``accept()`` on
``<job folder>/rank-N.sock`` (mode 0600 in the 0700 job folder; a peer of another user is
refused), so the rank runs as fast as a plain one. Requests and replies are JSON lines, one
reply per request, several requests per connection:

    {"command": "ping"}                          -> {"event": "armed", "rank", "pid"}
    {"command": "attach"}                        -> {"event": "listening", "host", "port", ...}
    {"command": "eval", "expr": E, "timeout": S} -> {"event": "result", "text", "type"}
        optional: "frame" (an index, a function name, or a qualified one: ``Module._call_impl``,
        ``torch.nn.modules.module.Module._call_impl``), "function" (prefer its frame), "keep"
        (a key: keep a tensor's snapshot for digest); the reply may carry "output" (what the
        code printed), "number" (a scalar's value), "summary" (``runtime.summary``)
    {"command": "digest", "keep": K, "ranges": [[a, b], ...], "stats": bool}
                                                 -> {"event": "digest", "ranges": [...]}
    {"command": "stacks"}                        -> {"event": "stacks", "threads": [...],
                                                     "collectives": ``runtime.collectives``}
    {"command": "collectives"}                   -> {"event": "collectives", "collectives": ...}
        (the same, without the stacks: what the supervisor asks of a rank late in a group
        step, for the collective's sequence number)
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
import math
import os
import socket
import sys
import threading
import time

from rankdebug.runtime import peercred, wire

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

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
    thread = _start_thread("rankdebug-handler", _accept)
    handler.ident = thread.ident
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_after_fork_in_child)
    import atexit

    atexit.register(stop)
    return path


def _start_thread(name: str, target: Callable[..., None], *args: Any) -> threading.Thread:
    """A daemon thread of the handler's, started: never traced, and a "pydev daemon"
    thread, which debugpy neither lists, nor suspends, nor waits for at exit."""
    thread = threading.Thread(target=target, args=args, name=name, daemon=True)
    thread.pydev_do_not_trace = True  # type: ignore[attr-defined]
    thread.is_pydev_daemon_thread = True  # type: ignore[attr-defined]
    thread.start()
    return thread


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
        if not peercred.same_user(conn):
            conn.close()
            continue
        _start_thread("rankdebug-handler-conn", _serve, conn)


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
        return {"event": "stacks", "threads": stacks(), "collectives": _collectives()}
    if command == "collectives":
        return {"event": "collectives", "collectives": _collectives()}
    if command == "eval":
        expr = request.get("expr")
        if not isinstance(expr, str) or not expr.strip():
            return {"event": "error", "message": "eval needs an expression"}
        timeout = request.get("timeout", 10.0)
        if not isinstance(timeout, (int, float)) or timeout <= 0:
            timeout = 10.0
        return evaluate(expr, float(timeout), request.get("frame"), request.get("function"),
                        request.get("keep"))
    if command == "digest":
        return digest(request)
    if command == "attach":
        if handler.attach is None:
            return {"event": "error", "message": "this rank cannot start a debugger"}
        return handler.attach()
    return {"event": "error", "message": f"unknown command {command!r}"}


def _collectives() -> dict[str, Any] | None:
    """Where this rank is in its process groups' collectives (``runtime.collectives``)."""
    if "torch.distributed" not in sys.modules:
        return None  # what collectives.state() says then, without importing it (and ast,
        # dis, pickle: milliseconds in each of hundreds of ranks asked at once)
    from rankdebug.runtime import collectives

    try:
        return collectives.state()
    except Exception as exc:  # torch internals of another version: the stacks still count
        return {"error": f"{type(exc).__name__}: {exc}"}


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


def _stack() -> list[Any]:
    """The frames eval can pick from, innermost first: the main thread's (of a rank held at
    an exception: the traceback's), without rankdebug's and the debugger's own."""
    from rankdebug.runtime import frames

    held = _held()
    if held:
        stack = held[0].frames()
    else:
        stack = frames.walk(sys._current_frames().get(threading.main_thread().ident or 0))
    cut = frames.debugger_cut([f.f_code.co_filename for f in stack], needs_user=False)
    return [f for f in stack[cut:] if not frames.own_file(f.f_code.co_filename)]


def _qualname(f: Any) -> str:
    """``Class.method`` of a frame: the code's own (3.11 and later), else the class of its
    ``self`` (or ``cls``) that defines the function, else the function's name."""
    code = f.f_code
    qualname = getattr(code, "co_qualname", None)
    if isinstance(qualname, str):
        return qualname
    name: str = code.co_name
    try:
        owner = f.f_locals.get("self", f.f_locals.get("cls"))
        for cls in (owner if isinstance(owner, type) else type(owner)).__mro__:
            func = _function_of(cls.__dict__.get(name))
            if func is not None and getattr(func, "__code__", None) is code:
                return f"{cls.__qualname__}.{name}"
    except Exception:  # an object whose class cannot be walked: the plain name
        pass
    return name


def _function_of(value: object) -> object:
    """The function of a class attribute (a staticmethod's or classmethod's too)."""
    return getattr(value, "__func__", value) if value is not None else None


def _named(f: Any, name: str) -> bool:
    """Whether ``name`` names the frame: its function's name, its qualified name
    (``Module._call_impl``) or that with its module (``torch.nn.modules.module.Module.
    _call_impl``), or a dotted tail of the latter."""
    if f.f_code.co_name == name:
        return True
    if "." not in name:
        return False
    full = f"{f.f_globals.get('__name__', '')}.{_qualname(f)}"
    return full == name or full.endswith("." + name)


def _pick(stack: list[Any], frame: object) -> Any:
    """``frame``: an index into ``stack`` or a function name, plain or qualified (its
    innermost frame)."""
    if isinstance(frame, int) and not isinstance(frame, bool):
        if 0 <= frame < len(stack):
            return stack[frame]
        raise LookupError(f"no frame {frame}: the main thread has {len(stack)} (0 is the "
                          "innermost)")
    name = str(frame)
    for f in stack:
        if _named(f, name):
            return f
    raise LookupError(f"no frame of a function {frame!r} on the main thread's stack")


def namespace(frame: object = None, function: object = None,
              ) -> tuple[dict[str, Any], dict[str, Any]]:
    """Where code is evaluated: with ``frame`` (an index or a function name), that frame;
    else the innermost frame of ``function`` where there is one (the frame a client compared
    from); else the user's frames on the main thread's stack, the innermost first (its
    locals win), then the ``__main__`` module.

    Returns (globals, locals).
    """
    from rankdebug.runtime import frames

    stack = _stack()
    if frame is not None:
        one = _pick(stack, frame)
        return one.f_globals, dict(one.f_locals)
    if isinstance(function, str) and function:
        with contextlib.suppress(LookupError):  # no such frame: the user's frames
            one = _pick(stack, function)
            return one.f_globals, dict(one.f_locals)
    main = sys.modules.get("__main__")
    module_globals: dict[str, Any] = dict(vars(main)) if main is not None else {}
    user = [f for f in stack if frames.user_file(f.f_code.co_filename)]
    merged: dict[str, Any] = {}
    for one in reversed(user):  # outermost first: inner frames overwrite
        merged.update(one.f_locals)
    globals_ = user[0].f_globals if user else (vars(main) if main is not None else {})
    return globals_, {**module_globals, **merged}


# Snapshots kept for ``digest`` (Compare Across Ranks narrows a difference down, and the
# rank may run on meanwhile): key -> (when, elements). A few, for a short while.
_kept: dict[str, tuple[float, Any]] = {}
MAX_KEPT = 4
KEEP_S = 120.0


def _keep(key: object, elements: Any) -> None:
    if not isinstance(key, str) or not key or elements is None:
        return
    now = time.monotonic()
    for old in [k for k, (t, _) in _kept.items() if now - t > KEEP_S or k == key]:
        del _kept[old]
    while len(_kept) >= MAX_KEPT:
        _kept.pop(next(iter(_kept)))
    elements.snapshot()
    _kept[key] = (now, elements)


def evaluate(expr: str, timeout: float, frame: object = None, function: object = None,
             keep: object = None) -> dict[str, Any]:
    """Run ``expr`` (see ``repl``) in a thread of its own: its value's repr and type (with a
    summary for a tensor or an array) and what it printed, or why not, within ``timeout``."""
    from rankdebug.runtime import repl, summary

    result: dict[str, Any] = {}

    def run() -> None:
        try:
            globals_, locals_ = namespace(frame, function)
            value, output = repl.run(expr, globals_, locals_)
            result.update(event="result", text=repl.clip(repr(value)),
                          type=type(value).__name__)
            if output:
                result["output"] = output
            if isinstance(value, (bool, int, float)) and (
                    not isinstance(value, int) or abs(value) < 2 ** 53):
                result["number"] = value if math.isfinite(value) else str(value)
            described, elements = summary.summarize(value)
            if described is not None:
                result["summary"] = described
                _keep(keep, elements)
        except repl.EvalError as exc:
            result.update(event="error", message=str(exc))
            if exc.line is not None:
                result["line"] = exc.line
        except LookupError as exc:  # no such frame
            result.update(event="error", message=str(exc).strip("'\""))
        except BaseException as exc:  # the repr raised, or SystemExit: it is the user's code
            result.update(event="error", message=f"{type(exc).__name__}: {exc}")

    worker = _start_thread("rankdebug-handler-eval", run)
    worker.join(timeout)
    if worker.is_alive():
        return {"event": "error",
                "message": f"no result after {timeout:g} s (the expression still runs)"}
    return result


def digest(request: dict[str, Any]) -> dict[str, Any]:
    """Checksums (or elements) of ranges of a value an ``eval`` kept."""
    from rankdebug.runtime import summary

    kept = _kept.get(str(request.get("keep")))
    elements = kept[1] if kept is not None else None
    if elements is None:
        return {"event": "error", "message": "no value kept under that key (evaluate first)"}
    ranges = request.get("ranges")
    if not isinstance(ranges, list) or not all(
            isinstance(r, list) and len(r) == 2 and all(isinstance(x, int) for x in r)
            for r in ranges):
        return {"event": "error", "message": "digest needs ranges: [[a, b], ...]"}
    return {"event": "digest",
            "ranges": summary.digest(elements, ranges, request.get("stats") is not False)}

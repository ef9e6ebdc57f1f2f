"""Armed ranks (``rankdebug launch --arm``): a control socket per rank that can later start
the debugger, evaluate an expression, or read every thread's stack, without a restart.

Nothing runs until asked: one daemon thread blocks in ``accept()`` on
``<job folder>/rank-N.sock`` (mode 0600 in the 0700 job folder; a peer of another user is
refused), so the rank runs as fast as a plain one. Requests and replies are JSON lines, one
reply per request, several requests per connection:

    {"command": "ping"}                          -> {"event": "armed", "rank", "pid"}
    {"command": "attach"}                        -> {"event": "listening", "host", "port", ...}
    {"command": "eval", "expr": E, "timeout": S} -> {"event": "result", "text", "type"}
        optional: "frame" (``frame_pick``: an index, FILE:LINE, a function name, or a
        qualified one: ``Module._call_impl``), "function" (prefer its frame), "keep" (a key:
        keep a tensor's snapshot for digest, ``kept``); the reply may carry "output" (what
        the code printed), "number" (a scalar's value), "summary" (``runtime.summary``); an
        ambiguous frame name's error carries "candidates" ([{index, function, file, line}]);
        code still running after S seconds is stopped (``interrupt``); "at": {"seq": T}
        reads after the first optimizer step ending at collective count T or later, the
        main thread held there meanwhile (``at_step``; "no_step": true in the error when
        none came within S seconds); a result carries "seq", the count where it was read
    {"command": "digest", "keep": K, "ranges": [[a, b], ...], "stats": bool}
                                                 -> {"event": "digest", "ranges": [...]}
    {"command": "release", "keep": K}            -> {"event": "released", "released": bool}
    {"command": "stacks"}                        -> {"event": "stacks", "threads": [...],
                                                     "collectives": ``runtime.collectives``}
    {"command": "point"}                         -> {"event": "point", "seq", "stopped",
                                                     "optimizer"}
        (the rank's collective count over its process groups, whether the main thread is
        stopped, and whether it made an optimizer: where a compare starts from, ``at_step``)

    {"command": "collectives"}                   -> {"event": "collectives", "collectives": ...}
        (the same, without the stacks: what the supervisor asks of a rank late in a group
        step, for the collective's sequence number)
    {"command": "coords"}                        -> {"event": "coords", "coords", "sizes",
                                                     "source"}
        (the rank's parallel coordinates from the job's own layout, ``runtime.coords``:
        {"dp": 1, "tp": 3}, each dimension's size, "device_mesh" | "megatron" |
        "process_groups"; all null while the job has none; recorded into the registry
        once found)
    a request that fails                         -> {"event": "error", "message": ...}

Every line gets exactly one reply, whatever it holds: a line that is not a JSON object
(``hello``, ``[]``, ``null``, bytes that are no UTF-8, 100,000 nested brackets, more than
``MAX_REQUEST`` bytes), a request without a known command, a field of the wrong type or out
of range, a request for another rank (``"rank"``): each gets an ``error`` reply and changes
nothing; nothing a client sends raises out of the loop that serves it.

A rank held at an uncaught exception (``rankdebug.runtime.hold``; a chosen rank that its
debugger stopped at one too) answers too: ``ping``'s reply carries ``raised`` ({exception,
message, file, line, function}), ``eval`` reads the raising frame's namespace, ``stacks``
gives the held thread the traceback's frames (and ``raised``), and ``attach`` stops it there
once the client is configured.

Every connection is served by a thread of its own, so the handler answers while the main
thread waits in a collective (it needs the GIL only for the moment it reads or evaluates);
at most ``MAX_CONNECTIONS`` at once (one more is answered with an error and closed), each
closed after ``IDLE_S`` without a request.
Pure Python, 3.9 and later; debugpy is imported only by ``attach``.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading

from rankdebug.runtime import kept, peercred, wire
from rankdebug.runtime.serve import Door, Loop, Server

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any, Callable

MAX_REQUEST = 1 << 20


class _Handler:
    sock: socket.socket | None = None
    server: Server | None = None
    path = ""
    pid = 0
    rank = 0
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
    # The owner only; a connection over the cap gets one answer and goes (the rank's threads
    # are bounded). Guest process: no fault of a connection is printed, none ends the loop.
    full = wire.encode(_stamped(_error(f"{MAX_CONNECTIONS} connections are open already; "
                                       "try again")))
    handler.server = Server(sock, _serve,
                            Loop(name="rankdebug-handler", threads="rankdebug-handler-conn",
                                 spawn=_start_thread, on_error=_ignore),
                            Door(admit=peercred.same_user, cap=MAX_CONNECTIONS, full=full))
    handler.server.start()
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_after_fork_in_child)
    from rankdebug.runtime import coords

    coords.watch(_start_thread)  # recorded unasked once the job lays its ranks out
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
    handler.sock = None
    with contextlib.suppress(OSError):
        os.remove(handler.path)
    if handler.server is not None:
        handler.server.stop()


def _after_fork_in_child() -> None:
    # A DataLoader worker inherits the listening socket but not the thread: let it go, so
    # only the rank answers (and the file is the rank's to remove).
    if handler.sock is not None:
        with contextlib.suppress(OSError):
            handler.sock.close()
        handler.sock = None


def _ignore(_exc: BaseException) -> None:
    pass


MAX_CONNECTIONS = 32
IDLE_S = 60.0  # a connection that sends nothing this long is closed


def _serve(conn: socket.socket, _n: int) -> None:
    try:
        conn.settimeout(IDLE_S)
        with conn, conn.makefile("rb") as reader:
            for line in _lines(reader):
                reply = _answer(line)
                try:
                    data = wire.encode(_stamped(reply))
                except (TypeError, ValueError) as exc:  # a reply JSON cannot carry
                    data = wire.encode(_stamped(_error(f"cannot send the reply: {exc}")))
                conn.sendall(data)
    except Exception:  # the client went, or was idle too long: its connection ends
        pass


def _lines(reader: Any) -> Iterator[bytes | None]:
    """Each line the client sends; None for one longer than ``MAX_REQUEST`` (read to its
    end and dropped, so that it gets one reply, not one per piece)."""
    while True:
        line = reader.readline(MAX_REQUEST + 1)
        if not line:
            return
        if len(line) > MAX_REQUEST and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):
                line = reader.readline(1 << 16)
            yield None
            continue
        yield line


def _answer(line: bytes | None) -> dict[str, Any]:
    """One line -> its reply; never raises."""
    if line is None:
        return _error(f"bad request: longer than {MAX_REQUEST} bytes")
    try:
        request = wire.decode(line)
    except RecursionError:
        return _error("bad request: nested too deeply")
    except ValueError as exc:
        return _error(f"bad request: {_clip(str(exc))}")
    try:
        return handle(request)
    except Exception as exc:  # guest process: a failing request must not kill it
        return _error(f"{type(exc).__name__}: {_clip(str(exc))}")


def _stamped(reply: dict[str, Any]) -> dict[str, Any]:
    reply.setdefault("rank", handler.rank)
    reply.setdefault("pid", os.getpid())
    return reply


def _error(message: str) -> dict[str, Any]:
    return {"event": "error", "message": message}


def _clip(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _kind(value: object) -> str:
    """What a client sent, in a word (never its repr: it may be huge or deep)."""
    return "null" if value is None else type(value).__name__


COMMANDS = ("ping", "stacks", "collectives", "eval", "digest", "release", "attach", "point",
            "coords")
MAX_TIMEOUT_S = 86400.0
MAX_RANGES = 1024
MAX_NAME = 1000  # characters of a frame's or function's name


class BadField(Exception):
    """A request's field of the wrong type or out of range: its error reply."""


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _integer(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_eval(request: dict[str, Any]) -> Any:
    """An eval request's fields (``evaluate.Asked``); raises BadField."""
    from rankdebug.runtime import evaluate

    expr = request.get("expr")
    if not isinstance(expr, str) or not expr.strip():
        raise BadField("eval needs an expression (\"expr\": a string)")
    timeout = request.get("timeout", 10.0)
    if not _number(timeout) or not 0 < timeout <= MAX_TIMEOUT_S:
        raise BadField(f"\"timeout\" must be a number of seconds, more than 0 and at most "
                       f"{MAX_TIMEOUT_S:g} (got {_kind(timeout)})")
    frame = request.get("frame")
    if frame is not None and not (_integer(frame) or (
            isinstance(frame, str) and 0 < len(frame) <= MAX_NAME)):
        raise BadField(f"\"frame\" must be an index, FILE:LINE or a function name (got "
                       f"{_kind(frame)})")
    function = request.get("function")
    if function is not None and not (isinstance(function, str) and len(function) <= MAX_NAME):
        raise BadField(f"\"function\" must be a function name (got {_kind(function)})")
    keep = request.get("keep")
    if keep is not None and not kept.valid_key(keep):
        raise BadField(f"\"keep\" must be a key of 1 to {kept.MAX_KEY} characters (got "
                       f"{_kind(keep)})")
    at = request.get("at")
    if at is not None and not (isinstance(at, dict) and _integer(at.get("seq"))
                               and 0 <= at["seq"] < 1 << 62):
        raise BadField(f"\"at\" must be {{\"seq\": N}}, the collective count of the step to "
                       f"read after (got {_kind(at)})")
    asked = evaluate.Asked(expr, float(timeout))
    asked.frame, asked.function, asked.keep = frame, function, keep
    asked.at = at["seq"] if at is not None else None
    return asked


def _check_digest(request: dict[str, Any]) -> tuple[str, list[list[int]], bool]:
    """A digest request's fields: keep, ranges, stats; raises BadField."""
    key = request.get("keep")
    if not kept.valid_key(key):
        raise BadField("digest needs \"keep\": the key its eval kept the value under")
    ranges = request.get("ranges")
    if not isinstance(ranges, list) or not 0 < len(ranges) <= MAX_RANGES or not all(
            isinstance(r, list) and len(r) == 2 and all(_integer(x) for x in r)
            for r in ranges):
        raise BadField(f"digest needs ranges: [[a, b], ...], 1 to {MAX_RANGES} of them")
    stats = request.get("stats", True)
    if not isinstance(stats, bool):
        raise BadField(f"\"stats\" must be true or false (got {_kind(stats)})")
    return str(key), ranges, stats


def handle(request: dict[str, Any]) -> dict[str, Any]:
    """One request -> its reply (see the module docstring)."""
    command = request.get("command")
    if not isinstance(command, str) or command not in COMMANDS:
        what = (f"unknown command {_clip(command, 60)!r}" if isinstance(command, str)
                else f"a request needs \"command\": a string (got {_kind(command)})")
        return _error(f"{what}; one of {', '.join(COMMANDS)}")
    rank = request.get("rank", handler.rank)
    if not _integer(rank) or rank != handler.rank:
        said = _clip(str(rank), 20) if _integer(rank) else _kind(rank)
        return _error(f"this is rank {handler.rank}'s control socket, not rank {said}'s")
    try:
        return _handle(command, request)
    except BadField as exc:
        return _error(str(exc))


def _handle(command: str, request: dict[str, Any]) -> dict[str, Any]:
    from rankdebug.runtime import evaluate

    if command == "ping":
        reply: dict[str, Any] = {"event": "armed"}
        held = evaluate.held()
        if held:
            reply["raised"] = dict(held[0].info)
        return reply
    if command == "stacks":
        return {"event": "stacks", "threads": stacks(), "collectives": _collectives()}
    if command == "collectives":
        return {"event": "collectives", "collectives": _collectives()}
    if command == "coords":
        from rankdebug.runtime import coords

        return coords.answer(_start_thread)
    if command == "point":
        from rankdebug.runtime import at_step

        return at_step.point()
    if command == "eval":
        return evaluate.evaluate(_check_eval(request), _start_thread)
    if command == "digest":
        return evaluate.digest(*_check_digest(request))
    if command == "release":
        key = request.get("keep")
        if not kept.valid_key(key):
            raise BadField("release needs \"keep\": the key its eval kept the value under")
        return evaluate.release(str(key))
    if handler.attach is None:  # attach
        return _error("this rank cannot start a debugger")
    return handler.attach()


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


def stacks() -> list[dict[str, Any]]:
    """Every thread's stack but the handler's and the debugger's (``frames``: both are
    debugpy's daemon threads); a held thread's is its exception's traceback (where it
    raised), not the hook or the debugger it waits in."""
    from rankdebug.runtime import evaluate, frames

    threads = frames.thread_stacks()
    held = {h.ident: h for h in evaluate.held()}
    for thread in threads:
        one = held.get(thread["thread_id"])
        if one is not None:
            thread["frames"] = one.stack()
            thread["raised"] = dict(one.info)
    return threads


def _pick(stack: list[Any], frame: object) -> Any:
    """``frame_pick.pick`` (kept under this name for the tests that name a frame)."""
    from rankdebug.runtime import frame_pick

    return frame_pick.pick(stack, frame)

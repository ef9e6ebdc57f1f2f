"""The debugger in a chosen rank: debugpy on loopback, reported to the supervisor.

Imported by the bootstrap in chosen ranks only. Reads its settings from the environment
``rankdebug launch`` sets:

    RANKDEBUG_JOB        job id (registry folder name)
    RANKDEBUG_CTL        the supervisor's control socket (AF_UNIX); absent: write the registry
    RANKDEBUG_HOST       address to listen on (127.0.0.1)
    RANKDEBUG_PORTS      "rank:port,..." ports the supervisor reserved (any other chosen
                         rank takes any free port: runtime/port_rule.py)
    RANKDEBUG_WAIT       "1": wait for a client before the script runs on
    RANKDEBUG_DEBUGPY    a folder holding (a link to) the ``debugpy`` package
    RANKDEBUG_ADAPTER_PYTHON  the interpreter for debugpy's adapter process
    RANKDEBUG_BREAKS     JSON [[file, line], ...]: breakpoints known at start (fast path)
    RANKDEBUG_ATTACH     "start" (listen before the script runs) or "hit" (at the first
                         breakpoint hit, through hit-hooks; see ``hithook``)
    RANKDEBUG_NODE       "nodeN" on another node than the supervisor's (``--hosts``)
    RANKDEBUG_NODES      "HOSTNAME:nodeN,...": the other nodes, for ranks that srun or
                         mpirun starts there with the first node's environment

Pure Python, 3.9 and later; imports debugpy only when it is about to listen.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import socket
import sys
import threading

from rankdebug.runtime import frames, hidden, marks, tcp, wire

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from types import FrameType, TracebackType
    from typing import Any


class _State:
    rank = 0
    local_rank: int | None = None
    world_size: int | None = None
    listening: tuple[str, int] | None = None
    attached = False
    ctl: socket.socket | None = None
    job = ""
    lock = threading.Lock()
    pid = 0
    pause = False  # the client asked for a pause before the rank was traced
    waiting = False  # reading the supervisor's first reply (the client's breakpoints)
    attach_asked = False  # the attach signal came while waiting


state = _State()

# One attach at a time: a hit, the attach signal and an armed rank's handler may race.
_attach_lock = threading.RLock()


def _env(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def trace(what: str) -> None:
    """A phase of this rank's debug start (``marks``: RANKDEBUG_TRACE_FILE)."""
    marks.mark(f"rank {state.rank}", what)


_node: list[str] = []


def node() -> str:
    """``nodeN`` on another node of the job than the supervisor's (``launch --hosts``);
    empty on the supervisor's."""
    if not _node:
        name = _env("RANKDEBUG_NODE")
        if not name and _env("RANKDEBUG_NODES"):
            here = socket.gethostname()
            for item in _env("RANKDEBUG_NODES").split(","):
                host, _, label = item.partition(":")
                if host == here:
                    name = label
                    break
        _node.append(name)
    return _node[0]


_role: list[str] = []


def role() -> str:
    """A Ray actor's role, from the title Ray gives its worker process
    (``ray::critic_0:CriticWorker.update``): the class's words, a last ``Worker`` left out
    (``critic``; verl's ``ActorRolloutRefWorker``: ``actor/rollout/ref``). Empty elsewhere,
    and before the actor is made (``ray::IDLE``)."""
    if _role:
        return _role[0]
    if "ray" not in sys.modules:
        return ""
    try:
        with open("/proc/self/cmdline", "rb") as f:
            title = f.read(512).split(b"\0", 1)[0].decode("utf-8", "replace")
    except OSError:
        return ""
    if not title.startswith("ray::"):
        return ""
    name = title[5:].split(".", 1)[0].rsplit(":", 1)[-1]
    import re

    words = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+", name)
    if len(words) > 1 and words[-1] == "Worker":
        words.pop()
    found = "/".join(w.lower() for w in words)[:40]
    if found and name not in ("IDLE", "idle"):
        _role.append(found)
        return found
    return ""


def send(event: str, **fields: Any) -> None:
    """Report to the supervisor (a JSON line on its control socket) and the registry."""
    fields.update(event=event, rank=state.rank, pid=os.getpid())
    said_role = role() if event in ("adapter", "attached", "raised", "listening") else ""
    if said_role:
        fields["role"] = said_role  # known once the rank runs an actor's method
    node_name = node()  # another node of the job (``rankdebug launch --hosts``)
    if node_name:
        fields["node"] = node_name
    if state.ctl is not None:
        data = wire.encode(fields)
        with state.lock:
            try:
                state.ctl.sendall(data)
            except OSError:
                state.ctl = None
        return
    job = state.job
    if not job:
        return
    from rankdebug.runtime import registry

    if event == "exit":
        with contextlib.suppress(OSError, registry.RegistryError):
            registry.remove_rank(job, state.rank)
        return
    entry = {k: v for k, v in fields.items() if k not in ("event", "rank")}
    entry["state"] = {"started": "running"}.get(event, event)
    # Guest code: a registry that cannot be written must not fail the user's script.
    with contextlib.suppress(Exception):
        registry.update_rank(job, state.rank, **entry)


def _connect_ctl() -> None:
    path = _env("RANKDEBUG_CTL")
    if not path:
        return
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        return
    state.ctl = sock


def _port_for(rank: int) -> int:
    if node():  # the ports reserved were the supervisor's machine's; any free one here
        return 0
    for item in _env("RANKDEBUG_PORTS").split(","):
        r, _, p = item.partition(":")
        if r.strip() == str(rank):
            return _port(p)
    return 0  # not reserved (a rank the plan could not name): any free port


def _port(text: str) -> int:
    """A TCP port from a variable, or 0 (any free one) for anything else: a rank's
    environment must never stop it."""
    text = text.strip()
    if text.isascii() and text.isdigit() and len(text) <= 5 and 0 < int(text) < 65536:
        return int(text)
    return 0


# Run once debugpy is imported; ``bootstrap.watch_uncaught`` adds hold's watch of the
# debugger's stops at uncaught exceptions (hold imports this module: no import back).
after_debugpy: list[Callable[[], None]] = []


def import_debugpy() -> Any:
    # Frozen stdlib modules are fine for us: do not warn about them in every rank.
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    where = _env("RANKDEBUG_DEBUGPY")
    if where and where not in sys.path:
        sys.path.insert(0, where)
    try:
        import debugpy
    finally:
        if where in sys.path:
            sys.path.remove(where)
    from rankdebug.runtime import stepping

    stepping.install()  # a step after a pause that stopped at a return (debugpy loses it)
    for then in after_debugpy:  # hold's watch: a stop at an uncaught exception is a held
        then()                  # rank's to the tools
    _connect_at_once()
    return debugpy


def _connect_at_once() -> None:
    """pydevd's connection to its adapter with TCP_NODELAY (``tcp``) from its first message:
    the handshake when the rank attaches (authorization, system info, the configuration the
    gate replays) is a dozen answers in a row, each held ~40 ms by a delayed ACK otherwise."""
    import debugpy.server  # noqa: F401  (puts pydevd on sys.path)
    import pydevd
    from _pydevd_bundle import pydevd_comm

    made = getattr(pydevd, "start_client", None)
    if made is None or getattr(made, "rankdebug", False):
        return

    def start_client(host: str, port: int) -> Any:
        sock = made(host, port)
        tcp.no_delay(sock)
        hidden.apply()  # before pydevd reads a message (see ``hidden``)
        return sock

    hidden.keep()
    start_client.rankdebug = True  # type: ignore[attr-defined]
    pydevd.start_client = start_client
    pydevd_comm.start_client = start_client


def listen() -> tuple[str, int]:
    """Start debugpy's adapter on this rank's port (any free one if that is taken)."""
    if state.listening is not None:
        return state.listening
    debugpy = import_debugpy()
    # One debugger per rank: DataLoader workers and other children run without one.
    debugpy.configure(subProcess=False)
    # The adapter is a process of its own: run it with rankdebug's Python (debugpy's adapter
    # needs 3.10+, while a rank may run 3.9).
    adapter_python = _env("RANKDEBUG_ADAPTER_PYTHON")
    if not (adapter_python and os.access(adapter_python, os.X_OK)):
        adapter_python = sys.executable
    # No supervisor started an adapter for this rank: the one debugpy spawns runs owner-only
    # all the same (``adapter_wrapper``), unless no private folder can hold the wrapper.
    host = _env("RANKDEBUG_HOST", "127.0.0.1") or "127.0.0.1"
    from rankdebug.runtime.port_rule import on_port_or_any

    with _stdio_detached():
        # A reserved port taken meanwhile: any free one (the wrapper is spent: a new one).
        got = on_port_or_any(_port_for(state.rank),
                             lambda port: _listen_on(debugpy, adapter_python, host, port),
                             (RuntimeError,))
    state.listening = (str(got[0]), int(got[1]))
    send("listening", host=state.listening[0], port=state.listening[1],
         local_rank=state.local_rank, world_size=state.world_size)
    return state.listening


def _listen_on(debugpy: Any, adapter_python: str, host: str, port: int) -> Any:
    from rankdebug.runtime import adapter_wrapper, registry

    wrapper = None
    try:
        wrapper = adapter_wrapper.write(registry.root(), os.getpid(), adapter_python)
    except (OSError, registry.RegistryError) as exc:
        trace(f"no owner-only adapter ({exc}): debugpy's own listens")
    debugpy.configure(python=wrapper or adapter_python)
    try:
        return debugpy.listen((host, port))
    finally:
        if wrapper is not None:
            with contextlib.suppress(OSError):
                os.remove(wrapper)


@contextlib.contextmanager
def _stdio_detached() -> Iterator[None]:
    """debugpy's adapter inherits stdin/stdout/stderr and outlives the rank; mpirun (and
    anything else that waits for the rank's pipes to close) would wait for it too. So the
    adapter is started with /dev/null as its stdio; the rank's own fds come back after."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        pass
    try:
        saved = [os.dup(fd) for fd in (0, 1, 2)]
    except OSError:
        yield
        return
    null = os.open(os.devnull, os.O_RDWR)
    try:
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        yield
    finally:
        for fd, copy in enumerate(saved):  # fds 0, 1, 2
            os.dup2(copy, fd)
            os.close(copy)
        os.close(null)


def wait_for_client() -> None:
    """Block until a client has attached and finished configuring (breakpoints set)."""
    import debugpy

    if not debugpy.is_client_connected():
        debugpy.wait_for_client()
    if not state.attached:
        state.attached = True
        send("attached")


def prepare(rank: int, local_rank: int | None, world_size: int | None,
            chosen: bool = True) -> None:
    """Set up reporting for this rank: control socket (or registry), exit and fork hooks.
    ``chosen``: the rank debugs from the start (an armed rank only reports)."""
    if state.pid == os.getpid():
        return
    state.rank, state.local_rank, state.world_size = rank, local_rank, world_size
    state.pid = os.getpid()
    state.job = _env("RANKDEBUG_JOB") or f"adhoc-{os.getppid()}"
    _connect_ctl()
    send("started", local_rank=local_rank, world_size=world_size,
         argv=list(sys.argv), cwd=os.getcwd(), chosen=chosen)
    atexit.register(_at_exit)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_after_fork_in_child)
    threading_atexit = getattr(threading, "_register_atexit", None)
    if threading_atexit is not None:
        threading_atexit(_before_thread_join)


def start(rank: int, local_rank: int | None, world_size: int | None) -> None:
    """Called by the bootstrap in a chosen rank before the user's script runs."""
    prepare(rank, local_rank, world_size, chosen=True)
    serve_handler(armed=False)
    if _env("RANKDEBUG_ATTACH", "start") == "hit":
        from rankdebug.runtime import attach_signal

        if attach_signal.preload_wanted():
            attach_signal.preload(_load_debugger)  # the hit then costs only the attach
        if _start_untraced():
            return
        # Traced from the start after all (function breakpoints, "raised" exceptions, Pause
        # before the script): through the gate when there is one.
        from rankdebug.runtime import hithook

        hithook.hooks.fired = True  # an attach signal now has nothing more to do
        if connect_adapter():
            wait_for_client()
            _suspend_if_paused()
            return
    # --attach start: an adapter the supervisor starts (it lets in the job's owner only),
    # else debugpy's own (no supervisor).
    if not connect_adapter():
        listen()
    # pydevd's tracer never sees the script's top frame end (it starts after this one), so
    # it cannot stop at an uncaught exception there: the excepthook does.
    _catch_uncaught()
    if _env("RANKDEBUG_WAIT", "1") == "1":
        wait_for_client()


def _start_untraced() -> bool:
    """--attach hit: run without a tracer until a hit-hook fires, Pause, a breakpoint the
    hooks cannot serve, or an uncaught exception. With a supervisor the rank first waits for
    its client's breakpoints (the supervisor's gate answers the client meanwhile). False:
    attach now instead (hooks cannot be planted here)."""
    from rankdebug.runtime import hithook

    # The supervisor's gate asks for an attach with this signal (Pause, new breakpoints).
    signal_number = _arm_attach_signal()
    wait = state.ctl is not None and _env("RANKDEBUG_WAIT", "1") == "1"
    send("armed", signal=signal_number, wait=wait)
    plan: dict[str, Any] = {"breaks": _breaks(), "uncaught": False}
    if wait:
        state.waiting = True  # an attach signal now is kept for after the reply
        try:
            got = _read_ctl()
        finally:
            state.waiting = False
        if got is not None:
            plan = got
    trace("go")
    breaks = [(str(f), int(n)) for f, n in plan.get("breaks") or []]
    state.pause = plan.get("pause") is True
    if plan.get("trace") or state.pause or state.attach_asked:
        return False
    if plan.get("uncaught"):
        _catch_uncaught()
    if not breaks:
        return True
    return hithook.install(breaks, on_hit)


def _read_ctl() -> dict[str, Any] | None:
    """The supervisor's reply on the control socket (None if it is gone)."""
    if state.ctl is None:
        return None
    try:
        with state.ctl.makefile("rb") as f:
            reply = wire.read(f)
    except (OSError, ValueError):
        return None
    return reply


def arm(folder: str, *, armed: bool = True) -> None:
    """Serve the rank's control socket (``rankdebug launch --arm``; see ``handler``).
    ``armed``: the socket is how the rank is debugged later (not a chosen rank's)."""
    from rankdebug.runtime import handler

    path = handler.start(folder, state.rank, attach=_attach_reply)
    if path is not None:
        send("handler", socket=path, armed=armed)


def job_folder() -> str | None:
    """The job's registry folder (ranks' control sockets live there)."""
    folder = _env("RANKDEBUG_ARM")
    if folder:
        return folder
    ctl = _env("RANKDEBUG_CTL")
    if ctl:
        return os.path.dirname(ctl)
    job = _env("RANKDEBUG_JOB")
    if not job:
        return None
    from rankdebug.runtime import registry

    try:
        return registry.job_dir(job)
    except (OSError, registry.RegistryError):
        return None


def serve_handler(*, armed: bool) -> str | None:
    """Serve the rank's control socket in the job's folder, once per process; its path.
    ``armed``: the socket is how the rank is debugged later (``--arm``, a held rank); a
    chosen rank serves one too (``armed=False``), so that eval, stacks and Compare Across
    Ranks reach it whether it runs or is paused (the handler's threads are never traced)."""
    from rankdebug.runtime import handler

    if handler.handler.sock is None or handler.handler.pid != os.getpid():
        folder = job_folder()
        if folder:
            arm(folder, armed=armed)
    return handler.handler.path if handler.handler.sock is not None else None


def attach_now() -> tuple[str, int]:
    """Start the debugger now, from any thread, without stopping the rank (an armed rank's
    ``attach``): connect to an adapter the supervisor starts, or listen; a client that
    attaches then sets its breakpoints in every thread."""
    with _attach_lock:
        if state.listening is None and not connect_adapter():
            listen()
        # No gate in front of a debugger started late: it reads rank-bound breakpoints itself.
        from rankdebug.runtime import pydevd_bound

        pydevd_bound.install(state.rank, state.local_rank)
        assert state.listening is not None
        if not state.attached:
            threading.Thread(target=_report_attached, name="rankdebug-handler-attached",
                             daemon=True).start()
        return state.listening


def _attach_reply() -> dict[str, Any]:
    """The handler's answer to ``attach``."""
    host, port = attach_now()
    return {"event": "listening", "host": host, "port": port, "job": state.job}


def _report_attached() -> None:
    threading.current_thread().pydev_do_not_trace = True  # type: ignore[attr-defined]
    with contextlib.suppress(Exception):
        wait_for_client()


def _breaks() -> list[tuple[str, int]]:
    text = _env("RANKDEBUG_BREAKS")
    if not text:
        return []
    try:
        data = json.loads(text)
        return [(str(f), int(n)) for f, n in data]
    except (ValueError, TypeError):
        return []


def connect_adapter() -> bool:
    """Connect to the adapter the supervisor started for this rank (see
    ``rankdebug.supervise.adapters``), as ``debugpy.listen`` does after spawning one.
    False when there is none (no supervisor, or it could not start one)."""
    with _attach_lock:
        return _connect_adapter()


def _connect_adapter() -> bool:
    if state.ctl is None or state.listening is not None:
        return False
    try:
        send("adapter")
        state.ctl.settimeout(60.0)
        reply = _read_ctl()
        state.ctl.settimeout(None)
    except OSError:
        return False
    if reply is None or "server_port" not in reply:
        return False
    state.pause = state.pause or reply.get("pause") is True
    debugpy = import_debugpy()
    debugpy.configure(subProcess=False)
    from debugpy.server import api

    api.ensure_logging()  # type: ignore[no-untyped-call]
    # rankdebug's own frames are hidden as pydevd connects (``hidden``, through the
    # ``start_client`` that ``import_debugpy`` installed): no patterns to pass here.
    kwargs: dict[str, Any] = {"suspend": False, "patch_multiprocessing": False,
                              "notify_stdin": False}
    import pydevd

    pydevd.settrace(
        host=str(reply["server_host"]),
        port=int(reply["server_port"]),
        wait_for_ready_to_run=False,
        block_until_connected=True,
        access_token=str(reply["token"]),
        **kwargs,
    )
    api.listen.called = True
    state.listening = (str(reply["client_host"]), int(reply["client_port"]))
    return True


def on_hit(frame: FrameType) -> None:
    """First hit of a planted breakpoint: attach the full debugger, then let it trace
    ``frame`` so the breakpoint on the next line stops there with reason "breakpoint"."""
    trace("hit")
    if not connect_adapter():
        listen()
    trace("connected")
    wait_for_client()
    trace("configured")
    import pydevd

    debugger = pydevd.get_global_debugger()
    if debugger is None:
        return
    _suspend_if_paused()
    debugger.set_trace_for_frame_and_parents(threading.get_ident(), frame)


def _suspend_if_paused() -> None:
    """Pause asked before the rank was traced: stop at the next traced line."""
    if not state.pause:
        return
    state.pause = False
    import pydevd
    from _pydevd_bundle.pydevd_comm_constants import CMD_THREAD_SUSPEND

    debugger = pydevd.get_global_debugger()
    if debugger is not None:
        debugger.set_suspend(threading.current_thread(), CMD_THREAD_SUSPEND,
                             suspend_other_threads=True, is_pause=True)


def _catch_uncaught() -> None:
    """Stop at an uncaught exception, in the main thread or another one, with its frames
    (the client's "Uncaught Exceptions" filter, on by default) although no tracer ran; the
    traceback printed after it starts at the user's code, as under plain Python."""
    previous = sys.excepthook

    def excepthook(kind: type[BaseException], value: BaseException,
                   tb: TracebackType | None) -> None:
        tb = frames.without_own(tb)
        value.__traceback__ = tb
        if not issubclass(kind, KeyboardInterrupt):
            _stop_at_exception(kind, value, tb)
        previous(kind, value, tb)

    sys.excepthook = excepthook
    previous_thread_hook = threading.excepthook

    def thread_excepthook(args: Any) -> None:
        if args.exc_value is not None:
            _stop_at_exception(args.exc_type, args.exc_value, args.exc_traceback)
        previous_thread_hook(args)

    threading.excepthook = thread_excepthook


def _stop_at_exception(kind: type[BaseException], value: BaseException,
                       tb: TracebackType | None) -> None:
    """Stop where an uncaught exception was raised, if the client's filters want it."""
    if not issubclass(kind, SystemExit) and (_traced_already() or _attach_for_exception()):
        import debugpy

        debugpy.trigger_exception_handler((kind, value, tb))


def _traced_already() -> bool:
    """The debugger is on with a client (--attach start, or attached since), and its tracer
    has not stopped at this thread's exception itself."""
    debugpy = sys.modules.get("debugpy")
    if state.listening is None or debugpy is None or not debugpy.is_client_connected():
        return False
    try:
        from _pydevd_bundle.pydevd_additional_thread_info import set_additional_thread_info

        info = set_additional_thread_info(threading.current_thread())
        return not info.suspended_at_unhandled
    except Exception:  # another pydevd: stop (a second stop beats none)
        return True


def _attach_for_exception() -> bool:
    """Attach the debugger at an uncaught exception, unless it is on already (it stopped
    there itself then)."""
    from rankdebug.runtime import hithook

    with hithook.hooks.lock:
        if hithook.hooks.fired:
            return False
        hithook.hooks.fired = True
    if not connect_adapter():
        return False
    wait_for_client()
    return True


def _arm_attach_signal() -> int | None:
    """Install the handler of the attach-now signal (a real-time one, unused by torch), unless
    the script's environment already handles it; returns its number."""
    import signal

    number = int(getattr(signal, "SIGRTMIN", 34)) + 3
    try:
        if signal.getsignal(number) not in (signal.SIG_DFL, None):
            return None
        signal.signal(number, _on_attach_signal)
    except (ValueError, OSError):
        return None
    return number


def _on_attach_signal(signum: int, frame: FrameType | None) -> None:
    """Attach the full debugger now, in the main thread, where it was interrupted.

    A signal handler runs between any two bytecodes of the main thread: in the middle of an
    import, or of a report on the control socket. Importing debugpy there can meet a
    half-imported module (``platform``, mid-``import torch``) and crash the rank, so debugpy
    is imported by a helper thread, which waits for such an import to finish; until it has,
    or while a report is being sent, the signal is sent again a little later."""
    from rankdebug.runtime import attach_signal, hithook

    if state.waiting:  # the control socket is mid-read: attach once the reply is in
        state.attach_asked = True
        return
    if frame is None or hithook.hooks.fired:
        return
    if (state.lock.locked() or attach_signal.in_import_system(frame)
            or not attach_signal.debugger_loaded(_load_debugger)):
        attach_signal.again(signum)
        return
    if not hithook.hooks.lock.acquire(blocking=False):  # interrupted inside a hook
        attach_signal.again(signum)
        return
    try:
        if hithook.hooks.fired:
            return
        hithook.hooks.fired = True
    finally:
        hithook.hooks.lock.release()
    try:
        on_hit(frame)
    except Exception as exc:  # raised into the user's code, it would end the rank
        print(f"rankdebug: rank {state.rank} could not attach the debugger: "
              f"{type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        if state.listening is None:
            hithook.hooks.fired = False  # nothing connected: a later ask may try again


def _load_debugger() -> None:
    import_debugpy()
    import debugpy.server.api  # noqa: F401
    import pydevd  # noqa: F401
    from debugpy.common import util  # noqa: F401

    trace("debugpy loaded")


def _after_fork_in_child() -> None:
    # A forked child (DataLoader worker) keeps no debugger: no tracer, no reports. Its copy
    # of the control socket goes, so the supervisor sees the rank's end when it ends.
    if state.ctl is not None:
        with contextlib.suppress(OSError):
            state.ctl.close()
        state.ctl = None
    if state.listening is None:
        return
    sys.settrace(None)
    threading.settrace(None)
    try:
        from _pydevd_bundle.pydevd_constants import set_global_debugger

        set_global_debugger(None)
    except Exception:
        pass


def _before_thread_join() -> None:
    """The script has ended: stop the debugger so its threads cannot keep the rank alive."""
    if os.getpid() != state.pid or state.listening is None:
        return
    try:
        import pydevd

        pydevd.stoptrace()
    except Exception:
        pass


def _at_exit() -> None:
    if os.getpid() == state.pid:
        send("exit")

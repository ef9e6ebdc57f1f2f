"""debugpy in this rank: imported from the job's private folder (``RANKDEBUG_DEBUGPY``), its
adapter started owner-only on the port the supervisor reserved (any free one if that is
taken), with the rank's stdio kept from it, and ``listening`` reported.

Pure Python, 3.9 and later; imports debugpy only when it is about to listen.
"""

from __future__ import annotations

import contextlib
import os
import sys

from rankdebug.runtime import hidden, tcp
from rankdebug.runtime.reporting import node, send, setting, state, trace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any


def _port_for(rank: int) -> int:
    if node():  # the ports reserved were the supervisor's machine's; any free one here
        return 0
    for item in setting("RANKDEBUG_PORTS").split(","):
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
    where = setting("RANKDEBUG_DEBUGPY")
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
    adapter_python = setting("RANKDEBUG_ADAPTER_PYTHON")
    if not (adapter_python and os.access(adapter_python, os.X_OK)):
        adapter_python = sys.executable
    # No supervisor started an adapter for this rank: the one debugpy spawns runs owner-only
    # all the same (``adapter_wrapper``), unless no private folder can hold the wrapper.
    host = setting("RANKDEBUG_HOST", "127.0.0.1") or "127.0.0.1"
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

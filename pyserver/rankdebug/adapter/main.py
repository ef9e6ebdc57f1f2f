"""debugpy's adapter, run so that only this user's connections reach it.

debugpy's adapter listens on loopback TCP with no authentication of its clients. Behind a
gate only the gate is meant to talk to it, but any local user could find its port. This
entry point runs the adapter unchanged except that every connection it accepts is first
checked with ``peer.allowed`` (the kernel's socket table names the connecting user) and
closed if it is not the job's owner. It also ends when the supervisor that started it
(``RANKDEBUG_SUPERVISOR_PID``) is gone, even killed outright: the adapter daemonizes, so no
parent-death signal reaches it, and a client still connected would keep it listening.

    python -m rankdebug.adapter.main DEBUGPY_ADAPTER_DIR ADAPTER_ARGS...
"""

from __future__ import annotations

import contextlib
import os
import runpy
import socket
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from rankdebug.runtime.procstat import is_zombie

WATCH_S = 0.5


def _watch(supervisor: int) -> None:
    """End this process once ``supervisor`` is gone (in a thread of its own)."""
    def run() -> None:
        while True:
            time.sleep(WATCH_S)
            if is_zombie(supervisor):  # ended, or ended and not yet reaped
                os._exit(0)

    threading.Thread(target=run, name="rankdebug-supervisor-watch", daemon=True).start()


def main(argv: list[str]) -> None:
    adapter_dir, args = argv[0], argv[1:]
    supervisor = os.environ.get("RANKDEBUG_SUPERVISOR_PID", "")
    if supervisor.isdigit():
        # The adapter forks to daemonize: the watch must run in the process that stays.
        os.register_at_fork(after_in_child=lambda: _watch(int(supervisor)))
        _watch(int(supervisor))
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(adapter_dir))))
    from debugpy.common import sockets

    from rankdebug.adapter import peer
    from rankdebug.runtime.tcp import no_delay

    original = sockets.serve

    def serve(name: str, handler: Callable[[socket.socket], Any], *rest: Any,
              **kwargs: Any) -> Any:
        def owner_only(sock: socket.socket) -> Any:
            if peer.allowed(sock):
                no_delay(sock)
                return handler(sock)
            with contextlib.suppress(OSError):
                sock.close()
            return None

        return original(name, owner_only, *rest, **kwargs)

    sockets.serve = serve
    sys.argv = [adapter_dir, *args]
    runpy.run_path(adapter_dir, run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])

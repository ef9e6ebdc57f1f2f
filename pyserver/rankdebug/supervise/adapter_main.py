"""debugpy's adapter, run so that only this user's connections reach it.

debugpy's adapter listens on loopback TCP with no authentication of its clients. Behind a
gate only the gate is meant to talk to it, but any local user could find its port. This
entry point runs the adapter unchanged except that every connection it accepts is first
checked with ``peer.allowed`` (the kernel's socket table names the connecting user) and
closed if it is not the job's owner.

    python -m rankdebug.supervise.adapter_main DEBUGPY_ADAPTER_DIR ADAPTER_ARGS...
"""

from __future__ import annotations

import contextlib
import os
import runpy
import socket
import sys
from collections.abc import Callable
from typing import Any


def main(argv: list[str]) -> None:
    adapter_dir, args = argv[0], argv[1:]
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(adapter_dir))))
    from debugpy.common import sockets

    from rankdebug.supervise import peer

    original = sockets.serve

    def serve(name: str, handler: Callable[[socket.socket], Any], *rest: Any,
              **kwargs: Any) -> Any:
        def owner_only(sock: socket.socket) -> Any:
            if peer.allowed(sock):
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

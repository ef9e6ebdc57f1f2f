"""debugpy adapters started by the supervisor, ahead of the ranks that will use them.

``debugpy.listen()`` in a rank spawns debugpy's adapter and waits for it: about half a
second at the moment the rank reaches its first breakpoint, plus the client's connection
and handshake after that. In ``--attach hit`` mode the supervisor starts each chosen rank's
adapter as soon as the rank starts, reports it as listening, and the client attaches at once
(its ``attach`` waits for the rank). At its first hit the rank only connects to the adapter
(``debug.connect_adapter``), as ``debugpy.listen`` itself does after spawning one.
"""

from __future__ import annotations

import codecs
import json
import os
import socket
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

import rankdebug
from rankdebug.packages import package_dir


@dataclass(frozen=True)
class Adapter:
    client_host: str
    client_port: int
    server_host: str
    server_port: int
    token: str

    def for_rank(self) -> dict[str, Any]:
        return {
            "client_host": self.client_host,
            "client_port": self.client_port,
            "server_host": self.server_host,
            "server_port": self.server_port,
            "token": self.token,
        }


def with_rankdebug_on_path(env: dict[str, str]) -> dict[str, str]:
    """``env`` for a ``python -m rankdebug…`` child: rankdebug itself may come from a folder
    on sys.path only (the editor's bundle), so that folder leads PYTHONPATH."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(rankdebug.__file__)))
    return dict(env, PYTHONPATH=os.pathsep.join(p for p in (here, env.get("PYTHONPATH", ""))
                                               if p))


def start_adapter(host: str, port: int, env: dict[str, str], timeout: float = 30.0) -> Adapter:
    """Start debugpy's adapter for one rank: clients on ``host:port`` (0: any free port),
    the rank's debug server on a loopback port; returns both once they accept connections.
    The adapter daemonizes; the supervisor, a child subreaper, adopts it."""
    token = codecs.encode(os.urandom(32), "hex").decode("ascii")
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.settimeout(timeout)
        argv = [
            sys.executable, "-m", "rankdebug.adapter.main",  # owner-only accepts
            os.path.join(package_dir("debugpy"), "adapter"),
            "--for-server", str(listener.getsockname()[1]),
            "--host", host,
            "--port", str(port),
            "--server-access-token", token,
        ]
        # An attach may wait for its rank as long as the rank takes to reach a breakpoint.
        adapter_env = dict(env, DEBUGPY_PROCESS_SPAWN_TIMEOUT="0")
        adapter_env = with_rankdebug_on_path(adapter_env)
        # /dev/null stdio: the daemon must not hold the supervisor's stdout (the JSON events)
        # or the job's pipes open after they are done.
        proc = subprocess.Popen(argv, env=adapter_env, close_fds=True, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        proc.wait(timeout)  # it forks again to daemonize
        conn, _ = listener.accept()
        with conn:
            conn.settimeout(timeout)
            data = b""
            while chunk := conn.recv(65536):
                data += chunk
    endpoints = json.loads(data.decode("utf-8"))
    if "error" in endpoints:
        raise OSError(str(endpoints["error"]))
    return Adapter(
        client_host=str(endpoints["client"]["host"]),
        client_port=int(endpoints["client"]["port"]),
        server_host=str(endpoints["server"]["host"]),
        server_port=int(endpoints["server"]["port"]),
        token=token,
    )

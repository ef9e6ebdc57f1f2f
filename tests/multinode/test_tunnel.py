"""``jobs.tunnel``: the way from node 0 to a debugger port on node 1's loopback, as
``rankdebug attach --hosts`` starts it. Another user of node 0 is told why and turned away,
the owner's session is relayed both ways, and the tunnel ends with that session, or with
its ssh, closing its port. A line echo on node 1's loopback stands in for a rank's debugpy.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from cluster import Cluster

REPO = Path(__file__).resolve().parent.parent.parent
PORT = 29781  # the echo's, on node 1's loopback

_ECHO = """
import socket, sys, threading
listener = socket.create_server(("127.0.0.1", int(sys.argv[1])))
print("ready", flush=True)
def echo(conn):
    with conn:
        while data := conn.recv(65536):
            conn.sendall(data)
while True:
    conn, _ = listener.accept()
    threading.Thread(target=echo, args=(conn,), daemon=True).start()
"""

# On node 0: start a tunnel to node 1's echo, try it as another user and as its owner, and
# say when it ends (after the session, or after its ssh is killed) and whether its port is
# closed then.
_DRIVER = """
import json, os, signal, socket, subprocess, sys, time
from rankdebug.jobs.nodes import tunnel

OTHER = ("import socket, sys\\n"
         "s = socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=20)\\n"
         "data = b''\\n"
         "while chunk := s.recv(4096):\\n    data += chunk\\n"
         "print(repr(data))\\n")


def pids(pattern):  # (the pattern joined here: this script's own text must not match)
    return subprocess.run(["pgrep", "-f", pattern], capture_output=True,
                          text=True).stdout.split()


def ended_after():
    start = time.monotonic()
    while time.monotonic() - start < 30:
        if not pids("rankdebug.jobs.nodes" + ".tunnel"):
            return time.monotonic() - start
        time.sleep(0.05)
    return None


def refused(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    except ConnectionRefusedError:
        return True
    return False


ssh, port, how = json.loads(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
local = tunnel.start(ssh, port)
out = {}
if how == "session":
    other = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                            "/usr/bin/python3", "-c", OTHER, str(local)],
                           capture_output=True, text=True, timeout=60)
    out["other"] = other.stdout.strip() or other.stderr
    with socket.create_connection(("127.0.0.1", local), timeout=20) as s:
        s.sendall(b"hello through\\n")
        data = b""
        while not data.endswith(b"\\n"):
            data += s.recv(4096)
        out["echo"] = data.decode()
else:  # its ssh ends: so does the tunnel, though nobody came
    ssh_pids = pids("ExitOnForward" + "Failure=yes")
    out["ssh"] = len(ssh_pids)
    for pid in ssh_pids:
        os.kill(int(pid), signal.SIGKILL)
out["ended_after"] = ended_after()
out["refused"] = refused(local)
print(json.dumps(out))
"""


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO / "pyserver")}


@pytest.mark.parametrize("how", ["session", "ssh_ends"])
def test_a_tunnel_serves_its_owner_once_and_ends(nodes: Cluster, how: str) -> None:
    echo = nodes[1].popen([sys.executable, "-c", _ECHO, str(PORT)], stdout=-1, text=True)
    try:
        assert echo.stdout is not None and echo.stdout.readline().strip() == "ready"
        got = nodes[0].run([sys.executable, "-c", _DRIVER,
                            json.dumps(nodes.ssh_argv(nodes[1])), str(PORT), how],
                           cwd=REPO, env=_env(), timeout=180)
        assert got.returncode == 0, got.stdout + got.stderr
        out = json.loads(got.stdout.strip().splitlines()[-1])
    finally:
        nodes[1].stop(echo)
    if how == "session":
        assert out["other"] == repr(b"this rank belongs to another user\r\n"), out
        assert out["echo"] == "hello through\n", out
    else:
        assert out["ssh"] == 1, out
    # at once after the session; within its 1 s look at ssh after ssh's end (margins for a
    # loaded machine); and its port is closed
    assert out["ended_after"] is not None and out["ended_after"] < 15, out
    assert out["refused"] is True, out

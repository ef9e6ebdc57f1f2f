"""A debugger's way to a rank on another host (``rankdebug attach JOB RANK --hosts …``).

The rank's debugpy listens on its own host's loopback. This process, started by
``rankdebug attach`` and left running on its own, holds ``ssh -N -L SOCKET:127.0.0.1:PORT
HOST`` (the local end a Unix socket in a private folder) and listens on 127.0.0.1 here for
the debugger, letting in the owner alone (the kernel's socket table names who connects, as
the gates do), and relays. It ends when that debugger's session ends, when ssh ends, or
after ``IDLE_S`` with nobody connected; the folder goes with it.

    python -m rankdebug.jobs.nodes.tunnel '{"ssh": [...], "port": N}'   prints {"port": LOCAL}
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

from rankdebug.adapter import peer
from rankdebug.runtime.serve import Door, Loop, Server
from rankdebug.runtime.tcp import no_delay

IDLE_S = 600.0
READY_S = 20.0


def _pipe(src: socket.socket, dst: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := src.recv(65536):
            dst.sendall(data)
    with contextlib.suppress(OSError):
        dst.shutdown(socket.SHUT_WR)


def _relay(client: socket.socket, path: str) -> None:
    far = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        far.connect(path)
    except OSError:
        far.close()
        return
    back = threading.Thread(target=_pipe, args=(far, client), daemon=True)
    back.start()
    _pipe(client, far)
    back.join()
    far.close()


def serve(ssh: list[str], port: int, out: int) -> int:
    folder = tempfile.mkdtemp(prefix="rankdebug-tunnel-")  # 0700
    path = os.path.join(folder, "s")
    # A connection of its own (the first value of an ssh option wins): the forward must end
    # with this process, not stay in a shared ControlMaster.
    proc = subprocess.Popen([ssh[0], "-o", "ControlPath=none", *ssh[1:-1], "-N",
                             "-o", "ExitOnForwardFailure=yes",
                             "-L", f"{path}:127.0.0.1:{port}", ssh[-1]],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + READY_S
        while not os.path.exists(path):
            if proc.poll() is not None or time.monotonic() > deadline:
                err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                os.write(out, (json.dumps({"error": err.strip() or "ssh ended"}) + "\n")
                         .encode())
                return 1
            time.sleep(0.02)
        listener = socket.create_server(("127.0.0.1", 0))
        os.write(out, (json.dumps({"port": listener.getsockname()[1]}) + "\n").encode())
        os.close(out)
        served: list[int] = []

        def session(client: socket.socket, n: int) -> None:
            try:
                no_delay(client)  # a DAP message relayed at once (rankdebug.runtime.tcp)
                _relay(client, path)
            finally:
                served.append(n)  # that debugger's session is over: so is the tunnel

        # Another user of this machine is told why, and turned away.
        Server(listener, session,
               Loop(name="rankdebug-tunnel", alive=lambda: proc.poll() is None and not served,
                    every_s=1.0, idle_s=IDLE_S),
               Door(admit=peer.allowed, refused=b"this rank belongs to another user\r\n")).run()
        return 0
    finally:
        if proc.poll() is None:
            proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5)
        shutil.rmtree(folder, ignore_errors=True)


def start(ssh: list[str], port: int, timeout: float = READY_S + 5) -> int:
    """Start a tunnel to ``127.0.0.1:port`` on the host ``ssh`` reaches; its local port.
    Raises OSError with ssh's message when it cannot."""
    read_end, write_end = os.pipe()
    spec = json.dumps({"ssh": ssh, "port": port, "fd": write_end})
    env = dict(os.environ)
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (here, env.get("PYTHONPATH", "")) if p)
    subprocess.Popen([sys.executable, "-m", "rankdebug.jobs.nodes.tunnel", spec], env=env,
                     pass_fds=(write_end,), stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     start_new_session=True)
    os.close(write_end)
    data = b""
    deadline = time.monotonic() + timeout
    with os.fdopen(read_end, "rb") as f:
        while not data.endswith(b"\n") and time.monotonic() < deadline:
            chunk = f.read1(4096)
            if not chunk:
                break
            data += chunk
    try:
        answer = json.loads(data.decode() or "{}")
    except ValueError:
        answer = {}
    if "port" not in answer:
        raise OSError(str(answer.get("error") or "the tunnel did not start"))
    return int(answer["port"])


if __name__ == "__main__":
    got = json.loads(sys.argv[1])
    sys.exit(serve([str(a) for a in got["ssh"]], int(got["port"]), int(got["fd"])))

"""A host's warm agent (``jobs.node_agent``) answers ``eval``, which runs code in the ranks:
it answers its owner only, by the kernel's word on each connection (``SO_PEERCRED``), even
with its folder and socket opened up as a careless chmod would."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

_OTHER_USER = 65534  # nobody
_SYSTEM_PYTHON = next((p for p in ("/usr/bin/python3", "/usr/local/bin/python3")
                       if os.access(p, os.X_OK)), None)
_PROBE = ("import socket, sys\n"
          "s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(sys.argv[1])\n"
          "try:\n"
          "    s.sendall(b'{\"argv\": [\"jobs\", \"--json\"]}\\n')\n"
          "    print(repr(s.recv(65536)))\n"
          "except OSError as e:\n    print('error', e)\n")


def _ask(path: Path) -> dict[str, object]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(60)
        s.connect(str(path))
        s.sendall(json.dumps({"argv": ["jobs", "--json"]}).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            got = s.recv(65536)
            if not got:
                break
            data += got
    return dict(json.loads(data))


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (to act as a second local user)")
@pytest.mark.skipif(_SYSTEM_PYTHON is None, reason="needs a system python3")
@pytest.mark.timeout(120)
def test_the_agent_answers_its_owner_only_even_when_reachable() -> None:
    shared = Path(tempfile.mkdtemp(prefix="rankdebug-agent-", dir="/tmp"))
    folder = shared / "private"
    folder.mkdir(mode=0o700)
    path = folder / "agent.sock"
    try:
        started = subprocess.run([sys.executable, "-m", "rankdebug.jobs.nodes.node_agent", "start",
                                  str(path)], capture_output=True, text=True, timeout=60,
                                 check=False)
        assert started.returncode == 0 and started.stdout.strip() == str(path), started
        assert _ask(path)["code"] == 0  # the owner is answered
        for p, mode in ((shared, 0o755), (folder, 0o755), (path, 0o666)):
            p.chmod(mode)
        other = subprocess.run([str(_SYSTEM_PYTHON), "-c", _PROBE, str(path)],
                               capture_output=True, text=True, timeout=30, check=False,
                               user=_OTHER_USER, cwd="/")
        assert other.returncode == 0, other
        assert other.stdout.strip() in ("b''", "") or other.stdout.startswith("error"), other
        assert _ask(path)["code"] == 0  # and still serves its owner
    finally:
        for proc in Path("/proc").iterdir():  # the daemonised agent serving this socket
            try:
                cmdline = (proc / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if str(path).encode() in cmdline and proc.name.isdigit():
                with contextlib.suppress(OSError):
                    os.kill(int(proc.name), signal.SIGTERM)
        shutil.rmtree(shared, ignore_errors=True)

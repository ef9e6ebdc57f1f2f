"""Running ``rankdebug launch`` from tests: its JSON events, its end, what it leaves behind."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from dap_client import DAPClient
from rankdebug.protocol import fields, launch

SCRIPTS = Path(__file__).resolve().parent / "scripts"
BIN = Path(sys.executable).parent


def wait_for(what: str, check: Any, timeout: float = 90.0) -> Any:
    """``check()``'s first truthy value, polled every 0.1 s for up to ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def line_of(script: str, tag: str = "# BREAK") -> int:
    """1-based line of the first line of ``script`` holding ``tag``."""
    for n, text in enumerate((SCRIPTS / script).read_text().splitlines(), 1):
        if tag in text:
            return n
    raise AssertionError(f"{tag} not in {script}")


def tool(name: str) -> str:
    """An executable of this venv (torchrun, accelerate), else from PATH."""
    path = BIN / name
    return str(path) if path.exists() else (shutil.which(name) or name)


class Launch:
    """``rankdebug launch --json ARGS`` as a child process, its events read as they come."""

    def __init__(self, args: list[str], tmp: Path, env: dict[str, str] | None = None,
                 stdin: int | None = None) -> None:
        self.tmp = tmp
        self.stderr_path = tmp / "launch.stderr"
        full_env = dict(os.environ)
        full_env["PATH"] = f"{BIN}{os.pathsep}{full_env.get('PATH', '')}"
        full_env["MARKER_DIR"] = str(tmp)
        full_env.setdefault("OMP_NUM_THREADS", "1")
        full_env.update(env or {})
        self._err = open(self.stderr_path, "wb")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "rankdebug", "launch", "--json", *args],
            stdout=subprocess.PIPE, stderr=self._err, cwd=SCRIPTS, env=full_env, stdin=stdin,
        )
        self.events: list[dict[str, Any]] = []
        self._q: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.job: str | None = None
        self._clients: list[DAPClient] = []
        # Every event checked against its declaration (rankdebug/protocol/launch.py).
        self.wire_problems: list[str] = []

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            if isinstance(ev, dict) and "event" in ev:
                wrong = fields.problem(ev, launch.EVENTS)
                if wrong:
                    self.wire_problems.append(f"{wrong}: {line[:300]!r}")
            self._q.put(ev)
        self._q.put(None)

    def event(self, name: str | tuple[str, ...], timeout: float = 60.0) -> dict[str, Any]:
        """The next event called ``name`` (or any of those names; earlier ones of other names
        are kept)."""
        names = (name,) if isinstance(name, str) else name
        for ev in self.events:
            if ev.get("event") in names and not ev.get("_seen"):
                ev["_seen"] = True
                return ev
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {name!r} event; got {self.events}\n{self.stderr()}")
            try:
                ev = self._q.get(timeout=left)
            except queue.Empty:
                continue
            if ev is None:
                raise AssertionError(f"launch ended without {name!r}: {self.events}\n"
                                     f"{self.stderr()}")
            self.events.append(ev)
            if ev.get("event") == "job":
                self.job = ev["job"]
            if ev.get("event") in names:
                ev["_seen"] = True
                return ev

    def clients(self, count: int, timeout: float = 60.0) -> dict[int, DAPClient]:
        """A DAP client on each of the next ``count`` ranks to say ``listening``, by rank
        (closed by ``close``)."""
        found: dict[int, DAPClient] = {}
        for _ in range(count):
            ev = self.event("listening", timeout)
            found[int(ev["rank"])] = DAPClient(str(ev["host"]), int(ev["port"]),
                                               timeout=max(30.0, timeout))
        self._clients.extend(found.values())
        return found

    def wait(self, timeout: float = 120.0) -> int:
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired as exc:
            self.kill()
            raise AssertionError(f"launch still running after {timeout}s\n{self.stderr()}") from exc
        return code

    def exited(self, timeout: float = 120.0) -> int:
        """The code of the ``exited`` event (the launch process then ends with it too)."""
        code = int(self.event("exited", timeout)["code"])
        assert self.wait(10) == code
        assert not self.wire_problems, self.wire_problems
        if code:
            # Shown by pytest with the failure: why the job did not end cleanly.
            print(f"launch exited {code}; events {self.events}\n{self.stderr()}")
        return code

    def command(self, body: dict[str, Any]) -> None:
        """Send one JSON command (``--control``)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(body) + "\n").encode())
        self.proc.stdin.flush()

    def signal(self, sig: int = signal.SIGTERM) -> None:
        self.proc.send_signal(sig)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.job:
            for pid in job_processes(self.job):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)

    def stderr(self) -> str:
        if not self._err.closed:
            self._err.flush()
        return self.stderr_path.read_text(errors="replace")[-6000:]

    def close(self) -> None:
        for client in self._clients:
            client.close()
        self.kill()
        self._err.close()


def job_processes(job: str) -> list[int]:
    """Live processes whose environment carries the job id (zombies excluded)."""
    needle = f"RANKDEBUG_JOB={job}".encode()
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                env = f.read().split(b"\0")
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        if needle in env and stat[stat.rfind(b")") + 2 :][:1] not in (b"Z", b"X"):
            out.append(int(name))
    return out


def job_adapters(job: str) -> list[int]:
    """debugpy adapters started for ``job`` (the supervisor tags them with its id)."""
    out = []
    for pid in job_processes(job):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if any(a.endswith(b"debugpy/adapter") for a in argv):
            out.append(pid)
    return out


def listening_ports(pid: int) -> list[int]:
    """TCP ports process ``pid`` listens on (its socket inodes in /proc/net/tcp)."""
    inodes = set()
    with contextlib.suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
    ports = []
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        parts = line.split()
        if parts[3] == "0A" and parts[9] in inodes:  # LISTEN
            ports.append(int(parts[1].split(":")[1], 16))
    return ports


def adapter_ports(serves: int) -> list[int]:
    """The TCP ports the owner-only adapters serving process ``serves`` listen on."""
    ports = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        with contextlib.suppress(OSError):
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
            environ = Path(f"/proc/{name}/environ").read_bytes().split(b"\0")
            if (b"rankdebug.adapter.main" in cmdline
                    and f"RANKDEBUG_SUPERVISOR_PID={serves}".encode() in environ):
                ports += listening_ports(int(name))
    return ports


def nobody_listens(host: str, port: int) -> bool:
    """Nothing accepts connections on ``host:port`` (a port in TIME_WAIT counts as closed)."""
    try:
        with socket.create_connection((host, port), timeout=2.0):
            return False
    except OSError:
        return True


def read_json(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data

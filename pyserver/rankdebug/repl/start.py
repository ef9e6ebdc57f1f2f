"""The job a ``rankdebug debug -- CMD`` starts: ``rankdebug launch --json`` itself, as a child
(the same plan, supervisor and clean stop), its events read from its stdout.

The child gets a session of its own, so that Ctrl-C at the prompt reaches the prompt, not the
job; the job's own output goes to the terminal (launch writes it to stderr with ``--json``).
If this process dies, the child sees its reader gone and ends the job (launch's rule for an
editor that closes)."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import IO, Any

from rankdebug.runtime.wire import WireError, ask

STOP_S = 60.0  # launch's own grace for the ranks, and then some

OnEvent = Callable[[dict[str, Any]], None]


class Started:
    """``rankdebug launch --json LAUNCH_ARGS`` running (see the module's docstring)."""

    def __init__(self, launch_args: list[str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "rankdebug", "launch", "--json", *launch_args],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, start_new_session=True)
        self.events: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.on_event: OnEvent | None = None  # after the first events, they go here
        self._lock = threading.Lock()
        self.code: int | None = None
        assert self.proc.stdout is not None
        threading.Thread(target=self._read, args=(self.proc.stdout,),
                         name="rankdebug-repl-launch", daemon=True).start()

    def _read(self, out: IO[bytes]) -> None:
        for raw in out:
            try:
                event = json.loads(raw)
            except ValueError:
                continue
            if isinstance(event, dict):
                self._put(event)
        code = self.proc.wait()
        self._put({"event": "exited", "code": code} if self.code is None else None)

    def _put(self, event: dict[str, Any] | None) -> None:
        if event is not None and event.get("event") == "exited":
            if self.code is not None:
                return
            code = event.get("code")
            self.code = code if isinstance(code, int) else 1
        with self._lock:
            handler = self.on_event
        if handler is None:
            self.events.put(event)
        elif event is not None:
            handler(event)

    def next(self, timeout: float) -> dict[str, Any] | None:
        """The next event within ``timeout`` (None: none yet, or the stream ended)."""
        try:
            return self.events.get(timeout=timeout)
        except queue.Empty:
            return None

    def follow(self, handler: OnEvent) -> None:
        """From now on, events go to ``handler`` (those queued first)."""
        with self._lock:
            while True:
                try:
                    event = self.events.get_nowait()
                except queue.Empty:
                    break
                if event is not None:
                    handler(event)
            self.on_event = handler

    def stop(self, ctl: str | None) -> int:
        """End the job as launch ends it when asked (``stop`` on its control socket, else
        SIGTERM); its exit status."""
        if self.proc.poll() is None and ctl is not None:
            with contextlib.suppress(WireError):
                ask(ctl, {"command": "stop"}, timeout=5.0)
        deadline = time.monotonic() + STOP_S
        for sig in (None, signal.SIGTERM, signal.SIGKILL):
            if sig is not None and self.proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.proc.pid, sig)
            try:
                self.proc.wait(max(1.0, deadline - time.monotonic()))
                break
            except subprocess.TimeoutExpired:
                deadline = time.monotonic() + 10.0
        return self.proc.returncode if self.proc.returncode is not None else 1

"""``--json``'s output: one JSON line per event on stdout, and whether the program reading
it (an editor, a script) has gone: the pipe or socket on stdout has no reader left. A file
or a terminal never says so (the way to run a job on without a reader: README, "Outside VS
Code"). Once the reader is gone, what is still written goes nowhere, quietly."""

from __future__ import annotations

import contextlib
import io
import json
import os
import select
import stat
from typing import Any, TextIO


class JsonOut:
    def __init__(self, out: TextIO) -> None:
        self.out = out
        self._lost = False
        self._poll = self._watch()

    def write(self, event: dict[str, Any]) -> None:
        try:
            self.out.write(json.dumps(event) + "\n")
            self.out.flush()
        except (OSError, ValueError):  # its reader is gone: the loop ends the job
            self._lose()

    def reader_gone(self) -> bool:
        if self._lost:
            return True
        if self._poll is None:
            return False
        if not any(ev & (select.POLLERR | select.POLLHUP) for _, ev in self._poll.poll(0)):
            return False
        self._lose()
        return True

    def _watch(self) -> select.poll | None:
        """A poller of stdout when it is a pipe or socket (a reader that can go away);
        None for a file or a terminal. Looked at once: stdout does not change."""
        try:
            fd = self.out.fileno()
            mode = os.fstat(fd).st_mode
        except (OSError, ValueError, io.UnsupportedOperation):
            return None
        if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
            return None
        poller = select.poll()
        poller.register(fd, 0)  # POLLERR and POLLHUP are always reported
        return poller

    def _lose(self) -> None:
        """Its reader is gone: what is still buffered for stdout goes nowhere, quietly."""
        self._lost = True
        with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, self.out.fileno())
            os.close(null)

"""The prompt: plain stdin and stdout, readline's editing and history on a terminal.

Lines that arrive while the prompt waits (a rank stopped, a rank exited) are printed above
it and the prompt is drawn again with what was typed so far. Piped (a script, a test), the
prompt is printed too and each command read is echoed after it, so that a transcript reads
as a session did."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from typing import TextIO

PROMPT = "(rankdebug) "
ECHO_MAX = 400  # a piped command longer than this is echoed cut (it runs whole)
HISTORY = os.path.join(os.path.expanduser("~"), ".rankdebug_history")


class Console:
    def __init__(self, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout
        if hasattr(self.stdin, "reconfigure"):  # bytes that are no text: replaced, not fatal
            self.stdin.reconfigure(errors="replace")
        self.tty = self.stdin.isatty() and self.stdout.isatty()
        self._lock = threading.Lock()
        self._at_prompt = False
        self._readline = None
        if self.tty:
            with contextlib.suppress(ImportError):
                import readline

                self._readline = readline
                with contextlib.suppress(OSError):
                    readline.read_history_file(HISTORY)
                readline.set_history_length(1000)

    def say(self, text: str) -> None:
        """One or more lines, above the prompt when it waits."""
        with self._lock:
            if self._at_prompt:
                typed = self._readline.get_line_buffer() if self._readline else ""
                head = "\r\x1b[K" if self.tty else "\n"
                self.stdout.write(f"{head}{text}\n{PROMPT}{typed}")
            else:
                self.stdout.write(text + "\n")
            self.stdout.flush()

    def read(self) -> str | None:
        """The next command line; None at the end of input."""
        if self.tty:
            self._at_prompt = True
            try:
                return input(PROMPT)
            except EOFError:
                self.say("")
                return None
            finally:
                self._at_prompt = False
        with self._lock:
            self.stdout.write(PROMPT)
            self.stdout.flush()
            self._at_prompt = True
        try:
            line = self.stdin.readline()
        finally:
            with self._lock:
                self._at_prompt = False
                self.stdout.write(_echo(line.rstrip("\n")) + "\n" if line else "\n")
                self.stdout.flush()
        return line if line else None

    def wake(self) -> None:
        """Interrupt a read that waits (the job has ended): it raises KeyboardInterrupt."""
        if self._at_prompt:
            os.kill(os.getpid(), signal.SIGINT)

    def close(self) -> None:
        if self._readline is not None:
            with contextlib.suppress(OSError):
                self._readline.write_history_file(HISTORY)


def _echo(line: str) -> str:
    return line if len(line) <= ECHO_MAX else f"{line[:ECHO_MAX]}… ({len(line):,} characters)"

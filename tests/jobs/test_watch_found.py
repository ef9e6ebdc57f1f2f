"""``rankdebug watch JOB``: the hang watch of a job found running (a plain torchrun on
gloo/CPU, ``scripts/hang_job.py``), with the supervisor's rule and events: a hang is said
once, not before S seconds of watching, naming the rank that holds the job; a healthy job
watched over several diagnoses is never called stuck; the watch ends with the job; a job
``rankdebug launch`` supervises, an unknown job and a bad S are refused with the error
envelope.
"""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_diagnose import ODD, armed, plain

pytestmark = pytest.mark.timeout(300)


class Watcher:
    """``rankdebug watch JOB --json`` running, its lines read as they come."""

    def __init__(self, job: str, seconds: float) -> None:
        self.started = time.monotonic()
        self.proc = subprocess.Popen([sys.executable, "-m", "rankdebug", "watch", job,
                                      "--hang-seconds", str(seconds), "--json"],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue[tuple[float, dict[str, Any]]] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for text in self.proc.stdout:
            if text.strip():
                self.lines.put((time.monotonic() - self.started, json.loads(text)))

    def next(self, event: str, timeout: float) -> tuple[float, dict[str, Any]]:
        """The next line of ``event`` (others are kept in ``seen``), and when it came."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            assert left > 0, f"no {event!r} line; seen {self.seen}; stderr {self.stderr()}"
            with contextlib.suppress(queue.Empty):
                at, line = self.lines.get(timeout=min(left, 1.0))
                self.seen.append(line)
                if line["event"] == event:
                    return at, line

    def drain(self) -> list[dict[str, Any]]:
        while not self.lines.empty():
            self.seen.append(self.lines.get()[1])
        return self.seen

    def stderr(self) -> str:
        if self.proc.poll() is None:
            return "(running)"
        assert self.proc.stderr is not None
        return self.proc.stderr.read()[-2000:]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=30)
        if self.proc.poll() is None:
            self.proc.kill()


@contextlib.contextmanager
def watching(job: str, seconds: float) -> Iterator[Watcher]:
    w = Watcher(job, seconds)
    try:
        yield w
    finally:
        w.close()


def test_a_found_job_that_hangs_is_said_once_with_its_culprit(tmp_path: Path) -> None:
    seconds = 4.0
    w: Watcher | None = None
    try:
        with plain(tmp_path, "skip") as job:
            w = Watcher(job.id, seconds)
            _, first = w.next("watching", 60)
            assert first["ranks"] == 4 and first["seconds"] == seconds
            at, hang = w.next("hang", 120)
            # The clock ran from the start of the watch: never said before S.
            assert at >= seconds, at
            assert hang["job"] == first["job"]
            assert hang["why"].startswith("no rank has made progress for ")
            assert next(c["ranks"] for c in hang["culprits"]) == [ODD], hang
            assert hang["culprits"][0]["where"]["function"] == "skip"
            # Said once: two more periods of S bring no second hang.
            time.sleep(2.5 * seconds)
            assert [ln["event"] for ln in w.drain()].count("hang") == 1, w.seen
        # The job killed (leaving the block above): the watch says so and ends by itself.
        w.next("ended", 60)
        assert w.proc.wait(timeout=30) == 0
        assert "hang_over" not in [ln["event"] for ln in w.seen]
    finally:
        if w is not None:
            w.close()


def test_a_healthy_found_job_is_never_called_stuck(tmp_path: Path) -> None:
    seconds = 3.0
    with plain(tmp_path, "healthy") as job, watching(job.id, seconds) as w:
        w.next("watching", 60)
        # Four periods of S: at least three diagnoses, each seeing the ranks move.
        time.sleep(4 * seconds + 3)
        assert w.proc.poll() is None, w.stderr()
        events = [ln["event"] for ln in w.drain()]
        assert "hang" not in events, w.seen
        (tmp_path / "stop").write_text("")
        w.next("ended", 90)
        assert w.proc.wait(timeout=30) == 0


def _refused(*args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "rankdebug", "watch", *args, "--json"],
                         capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert "Traceback" not in out.stderr
    return str(json.loads(out.stdout)["error"]["message"])


def test_what_it_refuses(tmp_path: Path) -> None:
    assert "no job 'no-such-job'" in _refused("no-such-job")
    with armed(tmp_path, "healthy") as job:
        assert "supervisor watches it" in _refused(job.id)
        for bad in ("0", "-3", "nan", "1e9"):
            assert "--hang-seconds must be" in _refused(job.id, "--hang-seconds", bad)
        (tmp_path / "stop").write_text("")

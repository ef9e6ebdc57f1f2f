"""What ``rankdebug stacks`` says when py-spy cannot read a process: py-spy's own sentence and
its deepest cause, on one line, whatever the environment asks of Rust (with
``RUST_BACKTRACE=1`` py-spy's error ends in a backtrace, whose last line, ``10: main``, was
once said instead)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from rankdebug import pyspy


def _gone_pid() -> int:
    pid = 4_000_000
    while os.path.exists(f"/proc/{pid}"):
        pid += 1
    return pid


@pytest.mark.parametrize("backtrace", ["0", "1", "full"])
def test_a_process_that_is_gone_is_said_so(backtrace: str) -> None:
    out = subprocess.run([sys.executable, "-m", "rankdebug", "stacks", "--pid",
                          str(_gone_pid()), "--json"], capture_output=True, text=True,
                         timeout=120, check=False,
                         env={**os.environ, "RUST_BACKTRACE": backtrace})
    error = json.loads(out.stdout)["ranks"][0]["error"]
    assert error.startswith("Failed to get process executable name"), error
    assert error.endswith("No such file or directory (os error 2)"), error
    assert "\n" not in error


def test_the_complaint_reads_error_and_cause() -> None:
    text = ("Error: Failed to get process executable name. Check it runs.\n\nCaused by:\n"
            "    0: Permission denied (os error 13)\n    1: Permission denied (os error 13)\n"
            "\nStack backtrace:\n   0: anyhow::x\n  10: main\n")
    assert pyspy.complaint(text) == ("Failed to get process executable name. Check it runs: "
                                     "Permission denied (os error 13)")
    assert pyspy.complaint("Error: no python found\n") == "no python found"
    assert pyspy.complaint("something else\nlast words\n") == "last words"
    assert pyspy.complaint("") == "py-spy failed"

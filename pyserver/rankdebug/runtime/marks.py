"""Where the time of a debug start goes: with ``RANKDEBUG_TRACE_FILE=PATH`` every process of
a job (the supervisor, each rank, the gate's DAP messages) appends one timestamped line per
phase to PATH. The end-to-end suite reads it to say where a right-click's seconds went.
Kept import-light: a rank's bootstrap calls it before the user's script."""

from __future__ import annotations

import os
import time


def mark(who: str, what: str) -> None:
    path = os.environ.get("RANKDEBUG_TRACE_FILE")
    if not path:
        return
    try:
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"{time.time():.3f} {who} {what}\n")
    except OSError:
        pass  # a trace is never worth failing the job for

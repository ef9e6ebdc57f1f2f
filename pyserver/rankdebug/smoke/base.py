"""What every framework module provides, and the reasons the rewrite gives, written once.

A framework module exposes::

    NAME: str                      # as reported in "frameworks"
    PACKAGES: tuple[str, ...]      # what --check imports (find_spec) for it
    def detect(rw) -> bool         # does the command run this framework?
    def parallel(rw) -> int        # ranks its model parallelism needs (1: none)
    def rewrite(rw) -> None        # shrink its knobs, recording each change
"""

from __future__ import annotations

import re
from typing import Protocol

from rankdebug.smoke.context import Rewrite


class Framework(Protocol):
    NAME: str
    PACKAGES: tuple[str, ...]

    def detect(self, rw: Rewrite) -> bool: ...

    def parallel(self, rw: Rewrite) -> int: ...

    def rewrite(self, rw: Rewrite) -> None: ...


def steps_why(steps: int) -> str:
    return f"{steps} optimizer steps, then the run ends"


BATCH = "the smallest batch: one sample per rank"
ACCUMULATION = "one micro-batch per optimizer step"
SEQUENCE = "short sequences: the shapes stay real, the compute is tiny"
NO_EVAL = "no evaluation: the smoke run checks training"
NO_SAVE = "no checkpoint is written"
OUTPUT = "outputs go to a private folder, never over the real run's"
NO_REMOTE = "no logging to remote services"
WORKERS = "data is loaded in the rank itself: no worker processes to start"
SLICE = "a tiny slice of the data set"
LOG_EVERY = "a log line every step"

_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*(/[\w.-]+)?")


def looks_like_hub_id(value: str) -> bool:
    """``Qwen/Qwen2-7B`` or ``gpt2``: a name a hub resolves (when no such path is here)."""
    return bool(_HUB_ID.fullmatch(value)) and not value.endswith((".json", ".yaml", ".py"))


def samples(rw: Rewrite) -> int:
    """Enough samples for every step on every data-parallel rank, and no more."""
    return max(8, rw.settings.steps * rw.data_parallel)

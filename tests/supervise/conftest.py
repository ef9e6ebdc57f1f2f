"""Fixtures for the supervisor's unit tests: no process, no socket, a fake hub."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # supervise_fakes.py

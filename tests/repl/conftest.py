"""Fixtures for the terminal debugger's suite: real jobs, the prompt driven through a pipe."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # repl_helpers.py

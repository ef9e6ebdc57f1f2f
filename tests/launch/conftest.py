"""Fixtures for the ``rankdebug launch`` suite: real torchrun, real debugpy, our DAP client."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/dap_client.py
sys.path.insert(0, str(Path(__file__).resolve().parent))  # launch_helpers.py

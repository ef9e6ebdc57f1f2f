"""Fixtures for the running-jobs suite: real torchrun jobs started without rankdebug."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/dap_client.py
sys.path.insert(0, str(Path(__file__).resolve().parent))  # jobs_helpers.py

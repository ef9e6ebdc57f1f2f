"""Every smoke test writes its config copies under its own runtime folder."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/dap_client.py


@pytest.fixture(autouse=True)
def runtime_dir(tmp_path_factory: pytest.TempPathFactory,
                monkeypatch: pytest.MonkeyPatch) -> Path:
    # Beside the test's tmp_path, so that a test's "user files" are only the user's.
    run = tmp_path_factory.mktemp("xdg-runtime")
    run.chmod(0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(run))
    return run

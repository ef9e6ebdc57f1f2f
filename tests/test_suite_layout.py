"""The suite itself: pytest imports test modules by their file name (no packages), so two
test files of one name in different folders stop the whole run at collection (CI failed
so twice). Every test module's name is unique."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent


def test_every_test_module_name_is_unique() -> None:
    names = Counter(p.name for p in ROOT.rglob("test_*.py") if "node_modules" not in p.parts)
    assert [n for n, count in names.items() if count > 1] == []

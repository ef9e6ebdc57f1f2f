"""Rooms of a size a reader can hold: a module under ~600 lines, a class under ~300 (the
extension's TypeScript modules too). None is over today; a room ever listed as over may only
shrink, and no other room may grow past the limit."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODULE_LINES = 600
CLASS_LINES = 300

# Rooms allowed over the limits, with the most each may have: none since the splits of
# 2026-11-28 (docs/architecture.md, 5). A room added here may only shrink.
MODULES_OVER: dict[str, int] = {}
CLASSES_OVER: dict[str, int] = {}
TS_OVER: dict[str, int] = {}


def _python() -> tuple[dict[str, int], dict[str, int]]:
    modules, classes = {}, {}
    for path in sorted((ROOT / "pyserver" / "rankdebug").rglob("*.py")):
        name = str(path.relative_to(ROOT))
        text = path.read_text()
        modules[name] = len(text.splitlines())
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                classes[f"{name}:{node.name}"] = node.end_lineno - node.lineno + 1
    return modules, classes


def _over(sizes: dict[str, int], limit: int, allowed: dict[str, int]) -> list[str]:
    out = []
    for name, lines in sizes.items():
        most = allowed.get(name, limit)
        if lines > most:
            out.append(f"{name}: {lines} lines (at most {most})")
    return out


def test_python_modules_and_classes_stay_small() -> None:
    modules, classes = _python()
    assert _over(modules, MODULE_LINES, MODULES_OVER) == []
    assert _over(classes, CLASS_LINES, CLASSES_OVER) == []
    # A room split below the limit (or gone) leaves the list: it says only what is left.
    now = {n: (classes if ":" in n else modules).get(n) for n in {**MODULES_OVER,
                                                                  **CLASSES_OVER}}
    assert [n for n, lines in now.items()
            if lines is None or lines <= (CLASS_LINES if ":" in n else MODULE_LINES)] == []


def test_extension_modules_stay_small() -> None:
    sizes = {str(p.relative_to(ROOT)): len(p.read_text().splitlines())
             for p in sorted((ROOT / "extension" / "src").rglob("*.ts"))}
    assert _over(sizes, MODULE_LINES, TS_OVER) == []

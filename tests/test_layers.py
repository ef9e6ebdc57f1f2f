"""The package's layering: no import cycles, and no layer imports one above it.

    runtime (rank side: stdlib only) → errors, ranks, launcher_table, pyspy, packages,
    adapter, ssh,
    protocol (shared)
    → command (text → launch plan) → debugplan (→ what to run) | smoke (→ a tiny run)
      (siblings: neither imports the other)
    → supervise | jobs | lsp (siblings: none imports another) → cli, server, repl (the
      terminal debugger: over supervise's gates and jobs' registry)

Imports inside functions count: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "pyserver"
LAYERS: list[set[str]] = [
    {"rankdebug.runtime"},
    {"rankdebug.errors", "rankdebug.ranks", "rankdebug.launcher_table", "rankdebug.pyspy",
     "rankdebug.packages",
     "rankdebug.adapter", "rankdebug.ssh", "rankdebug.protocol", "rankdebug.hang_rule"},
    {"rankdebug.command"},
    {"rankdebug.debugplan", "rankdebug.smoke"},
    {"rankdebug.supervise", "rankdebug.jobs", "rankdebug.lsp"},
    {"rankdebug.cli", "rankdebug.cli_plan", "rankdebug.server", "rankdebug.__main__",
     "rankdebug.repl", "rankdebug.warm"},
]
# What rank-side code may import besides the standard library and itself.
RUNTIME_EXTRAS = {"debugpy", "pydevd", "_pydevd_bundle", "_pydev_bundle", "torch"}


def _modules() -> dict[str, Path]:
    out = {}
    for path in (ROOT / "rankdebug").rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> Iterator[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, *([base] if base else [])])
            for alias in node.names:
                full = f"{base}.{alias.name}"
                yield full if full in MODULES else base


def _internal(target: str) -> str | None:
    """The module of ours ``target`` names (a package's __init__ for its names)."""
    while target and target not in MODULES:
        target = target.rpartition(".")[0]
    return target or None


GRAPH: dict[str, set[str]] = {
    name: {m for t in _imports(name, path) if (m := _internal(t)) and m != name}
    for name, path in MODULES.items()
}


def _layer(module: str) -> tuple[int, str]:
    for i, layer in enumerate(LAYERS):
        for top in layer:
            if module == top or module.startswith(top + "."):
                return i, top
    if module == "rankdebug":  # the public API: rankdebug.breakpoint
        return 0, "rankdebug"
    raise AssertionError(f"{module} is in no layer: add it to LAYERS in {__file__}")


def test_every_module_has_a_layer() -> None:
    for name in MODULES:
        _layer(name)


def test_no_layer_imports_one_above_it_or_a_sibling() -> None:
    wrong = []
    for name, targets in GRAPH.items():
        layer, top = _layer(name)
        for target in targets:
            t_layer, t_top = _layer(target)
            if t_layer > layer or (t_layer == layer and layer in (3, 4) and t_top != top):
                wrong.append(f"{name} → {target}")
    assert not wrong, "imports against the layering:\n" + "\n".join(sorted(wrong))


def test_no_import_cycles() -> None:
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(GRAPH.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append([*path[path.index(nxt):], nxt])
            elif nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    for name in sorted(GRAPH):
        if name not in state:
            visit(name)
    assert not cycles, "import cycles:\n" + "\n".join(" → ".join(c) for c in cycles)


def test_rank_side_imports_only_the_standard_library() -> None:
    wrong = []
    for name, path in MODULES.items():
        if not name.startswith("rankdebug.runtime"):
            continue
        for target in _imports(name, path):
            top = target.split(".")[0]
            if top == "rankdebug":
                if not target.startswith("rankdebug.runtime"):
                    wrong.append(f"{name} → {target}")
            elif top not in sys.stdlib_module_names and top not in RUNTIME_EXTRAS:
                wrong.append(f"{name} → {target}")
    assert not wrong, "rank-side code importing more than the stdlib:\n" + "\n".join(wrong)


def _python39() -> str | None:
    """A Python 3.9 that runs (a pyenv shim on PATH may name one that is not installed)."""
    candidates = [*map(str, sorted(Path.home().glob(".pyenv/versions/3.9*/bin/python3.9"))),
                  shutil.which("python3.9")]
    for python in filter(None, candidates):
        ran = subprocess.run([python, "--version"], capture_output=True, text=True,
                             check=False)
        if ran.returncode == 0 and ran.stdout.startswith("Python 3.9"):
            return python
    return None


def test_rank_side_parses_as_python_3_9() -> None:
    for name, path in MODULES.items():
        if name.startswith("rankdebug.runtime") or name == "rankdebug":
            ast.parse(path.read_text(encoding="utf-8"), feature_version=(3, 9))


def test_rank_side_imports_on_python_3_9() -> None:
    """mypy checks no older target than 3.10; a real 3.9 imports every rank-side module."""
    python = _python39()
    if python is None:
        pytest.skip("no Python 3.9 on this machine")
    names = sorted(n for n in MODULES if n.startswith("rankdebug.runtime") or n == "rankdebug")
    code = "import importlib, sys\nfor n in sys.argv[1:]:\n    importlib.import_module(n)\n"
    out = subprocess.run([python, "-I", "-c", f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
                          + code, *names], capture_output=True, text=True, timeout=60,
                         check=False)
    assert out.returncode == 0, out.stderr

"""Tracer-free breakpoints: hit-hooks planted in the user's code (``--attach hit``).

A debugger attached at start makes the rank run its imports and model construction under a
trace function (1.4x to 1.9x slower to reach the first breakpoint). The breakpoints of a
debug session are known when the job starts, so a chosen rank can instead run untraced
until it reaches one:

1. every file holding a breakpoint is compiled with a call ``__rankdebug_hit__()`` planted
   before the statement of each breakpoint line. The call carries line number 0, so every
   other line keeps its number, and the statement after it starts a new line: once a
   tracer is on, that line's ``line`` event fires, and the debugger stops there with reason
   ``breakpoint`` (conditions, hit counts and logpoints are the debugger's own);
2. imported files are compiled that way by a wrapper around ``SourceFileLoader.get_code``;
   the main script, which Python runs without the import system, is caught by an audit hook
   on the ``exec`` event of its module code, which runs the planted code in ``__main__``
   instead and ends the interpreter with its outcome (as ``python -m debugpy`` runs a
   script through ``runpy``, one frame of ours sits at the bottom of the stack);
3. functions that arrive pickled by value (cloudpickle: the methods of a Ray actor class
   and the bodies of Ray tasks, which a driver sends its workers) never pass the import
   system: cloudpickle's ``_make_function`` is wrapped (in Ray's vendored copy and in
   cloudpickle itself, when either is imported) so that a function whose code spans a
   breakpoint line gets the planted code of the same function, compiled from its file;
4. the first hook to run attaches the full debugger (``debug.on_hit``): listen, report the
   port, wait for the client's breakpoints, trace the caller's frame. Later hook calls cost a
   global lookup and a call.

Pure Python, 3.9 and later. Only chosen ranks with ``--break`` breakpoints load it.
"""

from __future__ import annotations

import ast
import builtins
import os
import sys
import threading

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from types import CodeType, FrameType
    from typing import Any

HOOK = "__rankdebug_hit__"


class _Hooks:
    files: dict[str, set[int]] = {}  # noqa: RUF012 (one instance, module state)
    names: set[str] = set()  # noqa: RUF012
    on_hit: Callable[[FrameType], None] | None = None
    fired = False
    main_done = False
    lock = threading.Lock()


hooks = _Hooks()


def plant(tree: ast.Module, lines: set[int]) -> tuple[ast.Module, set[int]]:
    """Insert a hook call before the statement of each line in ``lines``; returns the tree
    and the lines that got a hook (a line between statements gets the next statement's)."""
    planted: set[int] = set()
    for line in sorted(lines):
        body, index = _find(tree.body, line)
        if body is None or _is_future_or_docstring(body, index):
            continue
        if not (index > 0 and _is_hook(body[index - 1])):
            body.insert(index, _hook_stmt())
        planted.add(line)
    return tree, planted


def _blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists nested in ``stmt``, in source order."""
    out: list[list[ast.stmt]] = []
    for name in ("body", "orelse", "finalbody"):
        block = getattr(stmt, name, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            out.append(block)
    for name in ("handlers", "cases"):
        for part in getattr(stmt, name, None) or []:
            if part.body:
                out.append(part.body)
    return sorted(out, key=lambda b: _first_line(b[0]))


def _find(body: list[ast.stmt], line: int) -> tuple[list[ast.stmt] | None, int]:
    """The innermost statement list, and the index in it, of the statement that starts on
    ``line``, or holds it, or (for a line between statements) comes next."""
    for i, stmt in enumerate(body):
        if _is_hook(stmt):
            continue
        if line < _first_line(stmt):
            return body, i
        if line > (getattr(stmt, "end_lineno", None) or stmt.lineno):
            continue
        if line <= stmt.lineno:
            return body, i  # a decorator or the statement's first line
        for block in _blocks(stmt):
            if line <= (getattr(block[-1], "end_lineno", None) or block[-1].lineno):
                found, j = _find(block, line)
                if found is not None:
                    return found, j
                break
        return body, i  # a later line of the statement itself (a multi-line expression)
    return None, 0


def _first_line(stmt: ast.stmt) -> int:
    decorators: list[ast.expr] = getattr(stmt, "decorator_list", None) or []
    return min([stmt.lineno] + [d.lineno for d in decorators])


def _is_hook(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Call)
        and isinstance(stmt.value.func, ast.Name)
        and stmt.value.func.id == HOOK
    )


def _is_future_or_docstring(body: list[ast.stmt], index: int) -> bool:
    stmt = body[index]
    if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
        return True
    return (
        index == 0
        and isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _hook_stmt() -> ast.stmt:
    node = ast.Expr(ast.Call(ast.Name(HOOK, ast.Load()), [], []))
    for n in ast.walk(node):
        n.lineno = n.end_lineno = 0  # type: ignore[attr-defined]
        n.col_offset = n.end_col_offset = 0  # type: ignore[attr-defined]
    return node


def compile_planted(path: str, lines: set[int], filename: str | None = None) -> CodeType | None:
    """The code of the file at ``path`` with hooks for ``lines``; None if it cannot be read."""
    try:
        with open(path, "rb") as f:
            source = f.read()
        tree = ast.parse(source, filename or path)
    except (OSError, SyntaxError, ValueError):
        return None
    tree, _ = plant(tree, lines)
    code: CodeType = compile(tree, filename or path, "exec", dont_inherit=True)
    return code


def _targets(path: str) -> set[int] | None:
    if os.path.basename(path) not in hooks.names:
        return None
    return hooks.files.get(os.path.realpath(path))


def _hit() -> None:
    """The planted call: the first one attaches the debugger; later ones return at once."""
    if hooks.fired:
        return
    with hooks.lock:
        if hooks.fired:
            return
        hooks.fired = True
    frame = sys._getframe(1)
    if hooks.on_hit is not None:
        hooks.on_hit(frame)


def _patch_loader() -> None:
    external: Any = sys.modules["_frozen_importlib_external"]
    loader_cls = external.SourceFileLoader
    original = loader_cls.get_code
    if getattr(original, "__rankdebug_hithook__", False):
        return

    def get_code(self: Any, fullname: str) -> Any:
        path = self.get_filename(fullname)
        lines = _targets(path)
        if lines:
            code = compile_planted(path, lines)
            if code is not None:
                return code
        return original(self, fullname)

    get_code.__rankdebug_hithook__ = True  # type: ignore[attr-defined]
    loader_cls.get_code = get_code


# Modules whose ``_make_function(code, globals, name, argdefs, closure)`` rebuilds a function
# pickled by value.
PICKLERS = ("ray.cloudpickle.cloudpickle", "cloudpickle.cloudpickle")
_planted_files: dict[str, CodeType | None] = {}


def planted_code(code: CodeType) -> CodeType:
    """The planted twin of ``code`` (same file, name and first line) when it spans a hooked
    line and no hook has fired yet; else ``code`` itself."""
    if hooks.fired:
        return code  # traced from now on: the debugger itself stops at breakpoints
    lines = _targets(code.co_filename)
    if not lines:
        return code
    first, last = _span(code)
    if not any(first <= n <= last for n in lines):
        return code
    path = os.path.realpath(code.co_filename)
    if path not in _planted_files:
        _planted_files[path] = compile_planted(path, lines, code.co_filename)
    module = _planted_files[path]
    twin = _find_code(module, code) if module is not None else None
    return twin if twin is not None else code


def _span(code: CodeType) -> tuple[int, int]:
    """First and last line of ``code``, its nested functions included."""
    import dis

    first = last = code.co_firstlineno
    for _, line in dis.findlinestarts(code):
        if line is not None:
            last = max(last, line)
    for const in code.co_consts:
        if isinstance(const, type(code)):
            last = max(last, _span(const)[1])
    return first, last


def _find_code(tree: CodeType, like: CodeType) -> CodeType | None:
    """The code object in ``tree`` (nested functions included) that is ``like``'s twin."""
    for const in tree.co_consts:
        if not isinstance(const, type(tree)):
            continue
        if (const.co_name == like.co_name and const.co_firstlineno == like.co_firstlineno
                and const.co_freevars == like.co_freevars):
            return const
        found = _find_code(const, like)
        if found is not None:
            return found
    return None


def _wrap_pickler(module: Any) -> None:
    original = getattr(module, "_make_function", None)
    if original is None or getattr(original, "__rankdebug_hithook__", False):
        return

    def _make_function(code: CodeType, *rest: Any) -> Any:
        return original(planted_code(code), *rest)

    _make_function.__rankdebug_hithook__ = True  # type: ignore[attr-defined]
    module._make_function = _make_function


def _wrap_runpy(module: Any) -> None:
    """Scripts that ``runpy.run_path`` runs (torchrun --run-path, torchtune's ``tune run`` on
    one device) are compiled planted, as the loader's modules are."""
    original = getattr(module, "_get_code_from_file", None)
    if original is None or getattr(original, "__rankdebug_hithook__", False):
        return

    def _get_code_from_file(*args: Any) -> Any:
        got = original(*args)
        code = got[0] if isinstance(got, tuple) else got  # (code, fname) before 3.12
        filename = getattr(code, "co_filename", None)
        if hooks.fired or not isinstance(filename, str):
            return got
        lines = _targets(filename)
        planted = compile_planted(filename, lines) if lines else None
        if planted is None:
            return got
        return (planted, *got[1:]) if isinstance(got, tuple) else planted

    _get_code_from_file.__rankdebug_hithook__ = True  # type: ignore[attr-defined]
    module._get_code_from_file = _get_code_from_file


# Modules to wrap once they have run (or now, if they have): the picklers, runpy.
_AFTER_IMPORT: dict[str, Callable[[Any], None]] = {
    **{name: _wrap_pickler for name in PICKLERS}, "runpy": _wrap_runpy}


class _Wrapped:
    """A module's loader, which wraps the module once it has run (the original loader is
    left alone: a frozen module's is the FrozenImporter class, shared by all of them)."""

    def __init__(self, loader: Any, then: Callable[[Any], None]) -> None:
        self.loader, self.then = loader, then

    def create_module(self, spec: Any) -> Any:
        return self.loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self.loader.exec_module(module)
        self.then(module)

    def __getattr__(self, name: str) -> Any:  # get_code, get_source, is_package...
        return getattr(self.loader, name)


class _AfterImportFinder:
    """Finds an ``_AFTER_IMPORT`` module as the other finders would, with a wrapping loader."""

    @classmethod
    def find_spec(cls, fullname: str, path: Any = None, target: Any = None) -> Any:
        then = _AFTER_IMPORT.get(fullname)
        if then is None:
            return None
        for finder in sys.meta_path:
            if isinstance(finder, cls) or not hasattr(finder, "find_spec"):
                continue
            spec: Any = finder.find_spec(fullname, path, target)
            if spec is None:
                continue
            if getattr(spec.loader, "exec_module", None) is not None:
                spec.loader = _Wrapped(spec.loader, then)
            return spec
        return None


def _patch_after_import() -> None:
    for name, then in _AFTER_IMPORT.items():
        module = sys.modules.get(name)
        if module is not None:
            then(module)
    if not any(isinstance(f, _AfterImportFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImportFinder())


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event != "exec" or hooks.main_done:
        return
    code = args[0] if args else None
    if getattr(code, "co_name", None) != "<module>":
        return
    filename = code.co_filename  # type: ignore[union-attr]
    lines = _targets(filename)
    if not lines:
        return
    try:
        sys._getframe(1)
        return  # exec() called from Python code: not the main script's run
    except ValueError:
        pass
    hooks.main_done = True
    planted = compile_planted(filename, lines, filename)
    if planted is None:
        return
    main = sys.modules["__main__"]
    exec(planted, main.__dict__)
    # The script ran to its end: stop Python from running the original code again.
    raise SystemExit(0)


# Audit hooks run with tracing off unless they say otherwise; the debugger must see the
# script that this one runs.
_audit.__cantrace__ = True  # type: ignore[attr-defined]


def install(breaks: Sequence[tuple[str, int]], on_hit: Callable[[FrameType], None]) -> bool:
    """Plant hit-hooks for ``breaks`` (absolute paths, 1-based lines); False when they cannot
    be planted (the caller then attaches the debugger at start)."""
    if not hasattr(sys, "addaudithook"):
        return False
    for path, line in breaks:
        if line < 1:
            return False
        real = os.path.realpath(path)
        hooks.files.setdefault(real, set()).add(line)
        hooks.names.add(os.path.basename(path))
        hooks.names.add(os.path.basename(real))
    hooks.on_hit = on_hit
    setattr(builtins, HOOK, _hit)
    _patch_loader()
    _patch_after_import()
    sys.addaudithook(_audit)
    return True

"""Run what the user typed in a rank, as a small REPL (``rankdebug eval``, Compare Across
Ranks): an expression gives its value; statements, assignments, imports and multi-line code
run, and a last line that is an expression gives the value. What the code prints is captured
and returned, not written to the job's output.

The code runs in one namespace (the frame's globals, then the names earlier evals assigned,
then the frame's locals), so lambdas and comprehensions see the frame's locals. Names the code
assigns live on in this rank's session, not in the frame. Errors name the line and column of
the text as typed.

Stdlib only, Python 3.9 and later.
"""

from __future__ import annotations

import ast
import io
import sys
import threading

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FILENAME = "<rankdebug eval>"
MAX_TEXT = 100_000  # characters of a value's repr or of captured output sent back

session: dict[str, Any] = {}  # names earlier evals assigned, and ``_``


class EvalError(Exception):
    """The user's code did not compile or raised: the message says where, as typed."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


class _Routed(io.TextIOBase):
    """sys.stdout/sys.stderr while an eval runs: the eval threads' writes go to their
    buffers, every other thread's to the stream it had. The buffer is the thread's own
    (``threading.local``): an eval cut short leaves none behind for a later thread."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        buffer: io.StringIO | None = getattr(_captured, "buffer", None)
        if buffer is not None:
            return buffer.write(text)
        return int(self.stream.write(text))

    def flush(self) -> None:
        if getattr(_captured, "buffer", None) is None:
            self.stream.flush()

    def __getattr__(self, name: str) -> Any:  # fileno, encoding, isatty: the real stream's
        return getattr(self.stream, name)


_captured = threading.local()
_route_lock = threading.Lock()
_routing = [0]  # evals capturing now: the last one puts the real streams back


def _capture_start(buffer: io.StringIO) -> None:
    with _route_lock:
        for name in ("stdout", "stderr"):
            stream = getattr(sys, name)
            if not isinstance(stream, _Routed):
                setattr(sys, name, _Routed(stream))
        _routing[0] += 1
        _captured.buffer = buffer


def _capture_stop() -> None:
    with _route_lock:
        _captured.buffer = None
        _routing[0] -= 1
        if _routing[0] == 0:
            for name in ("stdout", "stderr"):
                stream = getattr(sys, name)
                if isinstance(stream, _Routed):
                    setattr(sys, name, stream.stream)


def clip(text: str, limit: int = MAX_TEXT) -> str:
    """``text`` cut to ``limit`` characters, saying how many more there were."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"… ({len(text) - limit} more characters)"


def _parse(source: str) -> ast.Module:
    """The code as a module (a one-liner typed with leading blanks is stripped of them, and
    error columns count them)."""
    text = source.rstrip()
    shift = 0
    if "\n" not in text:
        shift = len(text) - len(text.lstrip())
        text = text.lstrip()
    try:
        return ast.parse(text, FILENAME, "exec")
    except SyntaxError as exc:
        line = exc.lineno or 1
        column = (exc.offset or 1) + (shift if line == 1 else 0)
        raise EvalError(f"line {line}, column {column}: {exc.msg}", line) from None


def _where(exc: BaseException) -> int | None:
    """The line of the user's text where ``exc`` was raised (its innermost frame there)."""
    line = None
    import traceback  # errors only

    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == FILENAME:
            line = frame.lineno
    return line


def run(source: str, globals_: dict[str, Any], locals_: dict[str, Any]) -> tuple[Any, str]:
    """Run ``source``; its value (None when the last line is not an expression) and what it
    printed. Raises EvalError."""
    module = _parse(source)
    last: ast.Expression | None = None
    if module.body and isinstance(module.body[-1], ast.Expr):
        last = ast.Expression(module.body.pop().value)  # type: ignore[attr-defined]
    namespace: dict[str, Any] = {**globals_, **session, **locals_}
    namespace.setdefault("__builtins__", __builtins__)
    before = dict(namespace)
    output = io.StringIO()
    value = None
    _capture_start(output)
    try:
        if module.body:
            exec(compile(module, FILENAME, "exec"), namespace)
        if last is not None:
            value = eval(compile(last, FILENAME, "eval"), namespace)
    except BaseException as exc:  # SystemExit too: it is the user's text
        line = _where(exc)
        multi = "\n" in source.strip()
        where = f"line {line}: " if multi and line else ""
        raise EvalError(f"{where}{type(exc).__name__}: {exc}", line) from None
    finally:
        _capture_stop()
    for name, now in namespace.items():
        if name != "__builtins__" and (name not in before or before[name] is not now):
            session[name] = now
    if last is not None:
        session["_"] = value
    return value, clip(output.getvalue())

"""Which frame ``rankdebug eval --frame`` names: an index into the stack eval sees (0 the
innermost), ``FILE:LINE`` (the frame at that line; FILE a path, or its tail), or a function
name, plain or qualified (``forward``, ``Block.forward``, ``Module._call_impl``,
``torch.nn.modules.module.Module._call_impl``).

A name prefers the user's code: ``forward`` is the model's own ``forward``, not torch's
``Embedding.forward`` inside it. When it names frames of several functions of the same kind
(the user's ``Net.forward`` and ``Block.forward``), it is ambiguous: ``Ambiguous`` lists the
candidates, each with the index and place that pick it. Frames of one function (recursion,
``Module._call_impl`` at every layer) are one candidate: its innermost frame.

Pure Python, 3.9 and later.
"""

from __future__ import annotations

import os
import re

from rankdebug.runtime import frames

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import FrameType
    from typing import Any

_PLACE = re.compile(r"^(?P<file>.+):(?P<line>\d{1,9})$")
MAX_CANDIDATES = 8  # listed in the error; more are counted


class Ambiguous(LookupError):
    """A name that fits frames of several functions; ``candidates`` says which."""

    def __init__(self, message: str, candidates: list[dict[str, Any]]) -> None:
        super().__init__(message)
        self.candidates = candidates


def qualname(f: FrameType) -> str:
    """``Class.method`` of a frame: the code's own (3.11 and later), else the class of its
    ``self`` (or ``cls``) that defines the function, else the function's name."""
    code = f.f_code
    found = getattr(code, "co_qualname", None)
    if isinstance(found, str):
        return found
    name: str = code.co_name
    try:
        owner = f.f_locals.get("self", f.f_locals.get("cls"))
        for cls in (owner if isinstance(owner, type) else type(owner)).__mro__:
            func = _function_of(cls.__dict__.get(name))
            if func is not None and getattr(func, "__code__", None) is code:
                return f"{cls.__qualname__}.{name}"
    except Exception:  # an object whose class cannot be walked: the plain name
        pass
    return name


def _function_of(value: object) -> object:
    """The function of a class attribute (a staticmethod's or classmethod's too)."""
    return getattr(value, "__func__", value) if value is not None else None


def named(f: FrameType, name: str) -> bool:
    """Whether ``name`` names the frame: its function's name, its qualified name
    (``Module._call_impl``) or that with its module (``torch.nn.modules.module.Module.
    _call_impl``), or a dotted tail of the latter."""
    if f.f_code.co_name == name:
        return True
    if "." not in name:
        return False
    full = f"{f.f_globals.get('__name__', '')}.{qualname(f)}"
    return full == name or full.endswith("." + name)


def _at(f: FrameType, path: str, line: int) -> bool:
    """Whether the frame is at ``path:line`` (``path`` the file, or a tail of it)."""
    if frames.line_of(f) != line:
        return False
    file = f.f_code.co_filename.replace("\\", "/")
    path = path.replace("\\", "/")
    return file == path or file.endswith("/" + path.lstrip("/"))


def describe(stack: list[FrameType], index: int) -> dict[str, Any]:
    """One candidate: its index, function and place."""
    f = stack[index]
    return {"index": index, "function": qualname(f), "file": f.f_code.co_filename,
            "line": frames.line_of(f)}


def _listed(candidates: list[dict[str, Any]]) -> str:
    shown = [f"{c['index']} {c['function']} ({os.path.basename(c['file'])}:{c['line']})"
             for c in candidates[:MAX_CANDIDATES]]
    more = len(candidates) - MAX_CANDIDATES
    return "; ".join(shown) + (f"; and {more} more" if more > 0 else "")


def pick(stack: list[FrameType], frame: object, *, strict: bool = True) -> FrameType:
    """The frame ``frame`` names in ``stack`` (innermost first). Raises LookupError when
    none fits, ``Ambiguous`` when a name fits several functions (with ``strict``; else the
    innermost of the user's)."""
    if isinstance(frame, int) and not isinstance(frame, bool):
        if 0 <= frame < len(stack):
            return stack[frame]
        raise LookupError(f"no frame {frame}: the main thread has {len(stack)} (0 is the "
                          "innermost)")
    if not isinstance(frame, str) or not frame:
        raise LookupError("a frame is an index, FILE:LINE or a function name")
    place = _PLACE.match(frame)
    if place is not None:
        path, line = place.group("file"), int(place.group("line"))
        for f in stack:
            if _at(f, path, line):
                return f
        raise LookupError(f"no frame at {frame} on the main thread's stack")
    found = [i for i, f in enumerate(stack) if named(f, frame)]
    if not found:
        raise LookupError(f"no frame of a function {frame!r} on the main thread's stack")
    users = [i for i in found if frames.user_file(stack[i].f_code.co_filename)]
    pool = users or found
    firsts: dict[object, int] = {}  # one candidate per function: its innermost frame
    for i in pool:
        firsts.setdefault(stack[i].f_code, i)
    if len(firsts) > 1 and strict:
        candidates = [describe(stack, i) for i in firsts.values()]
        whose = "the user's " if users else ""
        raise Ambiguous(f"frame {frame!r} is ambiguous: {len(candidates)} functions of "
                        f"{whose}code are called that: {_listed(candidates)}; pick one by "
                        "its index, FILE:LINE or qualified name", candidates)
    return stack[pool[0]]

"""The string operators of parameter expansion: ``${X#p}``, ``${X%%p}``, ``${X/a/b}``,
``${X:1:2}``, ``${X^^}``..., on a known value."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable

from tree_sitter import Node

from rankdebug.command.expand.arith import Arith
from rankdebug.command.expand.chunks import Expansion
from rankdebug.command.state import text_of
from rankdebug.command.syntax import text


def string_op(op: str, value: str, rest: list[Node], ex: Expansion, src: str) -> str | None:
    args = rest[1:]
    if op.startswith("/") and "\\" in src:
        return _escaped_replace(op, value, src)
    if op in ("#", "##", "%", "%%"):
        return _trim(op, value, _glob(_string_arg(ex, args, 0)))
    if op in ("/", "//", "/#", "/%"):
        pat, rep = _glob(_string_arg(ex, args, 0)), _string_arg(ex, args, 1)
        return None if pat is None or rep is None else _replace(op, value, pat, rep)
    if op == ":":
        return _substring(value, [a for a in args if a.type != ":"], ex)
    case = _CASE.get(op)
    return case(value) if case is not None else None


def _string_arg(ex: Expansion, args: list[Node], i: int) -> str | None:
    """The operator's ``i``-th argument ('' when there is none; None when not known)."""
    vals = [a for a in args if a.type not in ("/", ":")]
    if i >= len(vals):
        return ""
    return text_of(ex.scalar(vals[i]))


def _escaped_replace(op: str, value: str, src: str) -> str | None:
    """tree-sitter splits `${X//\\//_}` wrongly; read escaped patterns from the text."""
    body = src[2:-1].split(op, 1)[-1] if src.startswith("${") else ""
    m = re.match(r"((?:\\.|[^/\\])*)(?:/(.*))?$", body, re.S)
    if m is None or "$" in body or "`" in body:
        return None
    pat_text, rep_text = m.group(1), m.group(2) or ""
    return _replace(op, value, _glob(pat_text) or "", re.sub(r"\\(.)", r"\1", rep_text))


def _trim(op: str, value: str, pat: str | None) -> str | None:
    """``${X#p}``, ``${X##p}``, ``${X%p}``, ``${X%%p}``."""
    if pat is None:
        return None
    lengths = range(len(value) + 1)
    order = list(lengths) if op in ("#", "%") else list(reversed(lengths))
    for n in order:
        piece = value[:n] if op.startswith("#") else value[len(value) - n:]
        if fnmatch.fnmatchcase(piece, pat):
            return value[n:] if op.startswith("#") else value[: len(value) - n]
    return value


def _substring(value: str, nums: list[Node], ex: Expansion) -> str | None:
    """``${X:offset}`` and ``${X:offset:length}``."""
    if not nums:
        return None
    off = Arith(ex).eval(nums[0]) if nums[0].type != "word" else ex.arith_text(text(nums[0]))
    if off is None:
        return None
    if off < 0:
        off = max(0, len(value) + off)
    if len(nums) == 1:
        return value[off:]
    ln = ex.arith_text(text(nums[1]))
    if ln is None:
        return None
    end = off + ln if ln >= 0 else len(value) + ln
    return value[off:end]


_CASE: dict[str, Callable[[str], str]] = {
    "^^": str.upper,
    ",,": str.lower,
    "^": lambda v: v[:1].upper() + v[1:],
    ",": lambda v: v[:1].lower() + v[1:],
}


def _replace(op: str, value: str, pat: str, rep: str) -> str | None:
    if not pat:
        return value
    regex = fnmatch.translate(pat)[4:-3]  # strip (?s: ... )\Z
    try:
        if op == "/#":
            return re.sub("^" + regex, lambda _m: rep, value, count=1)
        if op == "/%":
            return re.sub(regex + "$", lambda _m: rep, value, count=1)
        return re.sub(regex, lambda _m: rep, value, count=0 if op == "//" else 1)
    except re.error:
        return None


def _glob(pattern: str | None) -> str | None:
    """A bash pattern as fnmatch reads it: backslash escapes become brackets."""
    if pattern is None or "\\" not in pattern:
        return pattern
    return re.sub(r"\\(.)", lambda m: f"[{m.group(1)}]" if m.group(1) in "*?[" else m.group(1),
                  pattern)

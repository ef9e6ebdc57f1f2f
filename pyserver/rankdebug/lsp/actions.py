"""Quick fixes: a diagnostic whose ``data`` holds ``{"fix": text, "title": ...}`` becomes a
code action replacing the diagnostic's range with ``text``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from lsprotocol import types

_TITLES = {
    "unknown-flag": "Change to {fix}",
    "ambiguous-flag": "Change to {fix}",
    "too-many-processes": "Use {fix} processes per node",
    "missing-script": "Change to {fix}",
    "port-in-use": "Use another master port",
    "use-env": "Add --use-env",
}


def fix_title(code: str, fix: str) -> str:
    template = _TITLES.get(code)
    shown = fix if len(fix) <= 40 else fix[:37] + "..."
    if template is None:
        return f"Replace with {shown}"
    return template.format(fix=shown)


def _fix_of(d: types.Diagnostic) -> tuple[str, str] | None:
    data: Any = d.data
    if not isinstance(data, dict):
        return None
    fix, title = data.get("fix"), data.get("title")
    if not isinstance(fix, str):
        return None
    return fix, title if isinstance(title, str) else f"Replace with {fix}"


def _overlaps(a: types.Range, b: types.Range) -> bool:
    return (a.start.line, a.start.character) <= (b.end.line, b.end.character) and (
        b.start.line, b.start.character) <= (a.end.line, a.end.character)


def code_actions(
    uri: str,
    params: types.CodeActionParams,
    current: Sequence[types.Diagnostic],
) -> list[types.CodeAction]:
    """Quick fixes for the diagnostics in the request's range.

    The client's copies of the diagnostics are used when they carry ``data``; the
    server's current ones fill in for clients that drop it.
    """
    only = params.context.only
    if only and not any(k in (types.CodeActionKind.QuickFix, types.CodeActionKind.Empty)
                        or str(types.CodeActionKind.QuickFix).startswith(str(k))
                        for k in only):
        return []
    pool: Iterable[types.Diagnostic] = [*params.context.diagnostics, *current]
    seen: set[tuple[int, int, int, int, str]] = set()
    out: list[types.CodeAction] = []
    for d in pool:
        if d.source not in (None, "rankdebug") or not _overlaps(d.range, params.range):
            continue
        fixed = _fix_of(d)
        if fixed is None:
            continue
        fix, title = fixed
        r = d.range
        key = (r.start.line, r.start.character, r.end.line, r.end.character, fix)
        if key in seen:
            continue
        seen.add(key)
        edit = types.WorkspaceEdit(changes={uri: [types.TextEdit(range=r, new_text=fix)]})
        out.append(types.CodeAction(
            title=title,
            kind=types.CodeActionKind.QuickFix,
            diagnostics=[d],
            edit=edit,
            is_preferred=True,
        ))
    return out

"""One version of one document → its launch commands, lenses and diagnostics.

:func:`analyze` is pure (no server, no event loop): it runs in a worker thread on a
:class:`Snapshot`, so a large document never blocks the server. Everything positional
is converted to the client's units here, once per version.
"""

from __future__ import annotations

import functools
import inspect
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from lsprotocol import types
from pygls.workspace import PositionCodec

from rankdebug.command import CommandError, Diagnostic, LaunchPlan, plan_all
from rankdebug.command.line_moves import origin
from rankdebug.command.words import Span
from rankdebug.lsp import actions, checks, lenses
from rankdebug.lsp.lenses import Lenses, Texts
from rankdebug.lsp.positions import Converter, Lines
from rankdebug.lsp.settings import Settings

SOURCE = "rankdebug"
# "This value is not known here": not a mistake, shown as the unknownValues setting says.
UNKNOWN_CODES = frozenset({"unknown-value", "unknown-command"})
_SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}


class Planner(Protocol):
    """The engine's per-document incremental planner (rankdebug.command.incremental)."""

    def update(self, data: str | bytes) -> tuple[list[LaunchPlan], list[Diagnostic]]: ...


@dataclass
class PlannerSlot:
    """One document's planner, kept between analyses (they run one at a time per document).
    It is rebuilt when what it was built for changes, and dropped after a failure."""

    key: tuple[object, ...] | None = None
    planner: Planner | None = None
    broken: bool = False
    failure: str | None = None  # the incremental path's traceback, to log once
    # What the last analysis's lenses said, per plan as walked (by id; see
    # line_moves.origin): an edit elsewhere leaves most plans as they were, or moves them.
    texts: dict[int, tuple[LaunchPlan, Texts | None]] = field(default_factory=dict)
    texts_for: str = ""  # the uri they name


@functools.cache
def _accepts(fn: Callable[..., Any], name: str) -> bool:
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def env_kwargs(fn: Callable[..., Any], env: dict[str, str] | None,
               complete: bool) -> dict[str, Any]:
    """``caller_env`` (and ``env_complete`` where the engine takes it) for an engine call.
    An engine without ``env_complete`` reads any given environment as the whole of it."""
    kwargs: dict[str, Any] = {"caller_env": env}
    if env is not None and _accepts(fn, "env_complete"):
        kwargs["env_complete"] = complete
    return kwargs


def _make_planner(path: str | None, language: str, env: dict[str, str] | None,
                  complete: bool, cwd: Path | None) -> Planner | None:
    try:
        from rankdebug.command.incremental import DocumentPlans
    except ImportError:
        return None
    planner: Planner = DocumentPlans(path=path, language=language, cwd=cwd,
                                     **env_kwargs(DocumentPlans, env, complete))
    return planner


def plan_document(snap: Snapshot) -> tuple[list[LaunchPlan], list[Diagnostic]]:
    """Every launch command of the snapshot: incrementally when the engine can, else whole.
    Raises CommandError for documents the engine cannot read."""
    settings = snap.settings
    env, complete = settings.caller_env()
    cwd = settings.resolve_cwd(snap.path)
    slot = snap.planner
    if slot is not None and not slot.broken:
        key = (snap.path, snap.language, tuple(sorted((env or {}).items())), env is None,
               complete, cwd)
        if slot.key != key:
            slot.key = key
            slot.planner = _make_planner(snap.path, snap.language, env, complete, cwd)
        if slot.planner is not None:
            try:
                return slot.planner.update(snap.text)
            except CommandError:
                slot.key, slot.planner = None, None  # start afresh with the next text
                raise
            except Exception:
                # A bug in the incremental path: plan the whole document from now on.
                slot.broken, slot.planner = True, None
                slot.failure = traceback.format_exc()
    return plan_all(snap.text, path=snap.path, language=snap.language, cwd=cwd,
                    **env_kwargs(plan_all, env, complete))


@dataclass(frozen=True)
class Snapshot:
    """What the worker needs, copied on the event loop: nothing here changes under it."""

    uri: str
    seq: int  # the server's own count of changes to this document
    version: int | None
    text: str
    path: str | None
    language: str  # "shell" or "markdown"
    settings: Settings
    codec: PositionCodec
    planner: PlannerSlot | None = None


@dataclass
class Command:
    """One launch command of the document."""

    plan: LaunchPlan
    range: types.Range


@dataclass
class Analysis:
    snapshot: Snapshot
    converter: Converter
    plans: list[LaunchPlan] = field(default_factory=list)
    diagnostics: list[types.Diagnostic] = field(default_factory=list)
    lenses: Lenses = field(default_factory=Lenses)
    # An unexpected failure (a bug), for the log; the document then shows nothing.
    failure: str | None = None
    seconds: float = 0.0

    def command_at(self, row: int) -> Command | None:
        """The innermost command whose lines include ``row``."""
        best: LaunchPlan | None = None
        for plan in self.plans:
            span = plan.span
            if span.start_line <= row <= span.end_line and (
                best is None or span.start_line >= best.span.start_line
            ):
                best = plan
        return Command(best, self.converter.range(best.span)) if best is not None else None


def analyze(snap: Snapshot, early: Callable[[Lenses], None] | None = None) -> Analysis:
    """Plan every launch command of the snapshot and check them. ``early`` gets the code
    lenses as soon as they are made, before the checks and diagnostics (from this
    thread)."""
    started = time.perf_counter()
    lines = Lines(snap.text)
    conv = Converter(lines, snap.codec)
    out = Analysis(snap, conv)
    settings = snap.settings
    try:
        if not settings.enable:
            return out
        if len(snap.text) > settings.max_document_bytes or (
            len(snap.text) * 4 > settings.max_document_bytes
            and len(snap.text.encode("utf-8", "surrogatepass")) > settings.max_document_bytes
        ):
            size = settings.max_document_bytes >> 20
            out.diagnostics.append(_lsp(conv, Diagnostic(
                f"the document is larger than {size} MB; launch commands are not read",
                Span.point(0, 0), "info", "too-large"), settings))
            return out
        try:
            plans, doc_diags = plan_document(snap)
        except CommandError as exc:
            row = max((exc.line or 1) - 1, 0)
            col = max((exc.column or 1) - 1, 0)
            if settings.diagnostics:
                out.diagnostics.append(_lsp(conv, Diagnostic(
                    exc.message, Span(row, col, row, col + 1), "error", "unreadable"),
                    settings))
            return out
        out.plans = plans
        if settings.code_lens:
            out.lenses = _lenses(snap, conv, plans)
        if early is not None:
            early(out.lenses)
        findings = checks.run_checks(plans, lines, snap.path)
        if settings.diagnostics:
            found: list[Diagnostic] = list(doc_diags)
            for plan in plans:
                if origin(plan).diagnostics:  # (reading a moved plan's own moves its words)
                    found.extend(d for d in plan.diagnostics
                                 if id(d) not in findings.superseded)
            found.extend(findings.diagnostics)
            out.diagnostics = _convert_all(conv, found, settings)
    except Exception:  # a bug: keep the server up, say so in the log
        out.failure = traceback.format_exc()
        out.plans, out.lenses, out.diagnostics = [], Lenses(), []
    finally:
        out.seconds = time.perf_counter() - started
    return out


def _lenses(snap: Snapshot, conv: Converter, plans: list[LaunchPlan]) -> Lenses:
    """Every plan's lenses; what they say is kept from the last analysis for a plan that
    was not walked again (only, maybe, moved)."""
    slot = snap.planner
    before = slot.texts if slot is not None and slot.texts_for == snap.uri else {}
    now: dict[int, tuple[LaunchPlan, Texts | None]] = {}
    pieces: list[str] = []
    for plan in plans:
        walked = origin(plan)
        hit = before.get(id(walked))
        if hit is None or hit[0] is not walked:
            hit = (walked, lenses.texts(snap.uri, walked))
        now[id(walked)] = hit
        if hit[1] is not None:
            line, character = conv.units(plan.span.start_line, plan.span.start_col)
            pieces.append(lenses.lenses_json(hit[1], line, character))
    if slot is not None:
        slot.texts, slot.texts_for = now, snap.uri
    return Lenses(pieces)


def _convert_all(conv: Converter, found: Sequence[Diagnostic],
                 settings: Settings) -> list[types.Diagnostic]:
    seen: set[tuple[Span, str]] = set()
    result: list[types.Diagnostic] = []
    for d in found:
        key = (d.span, d.message)
        if key in seen:
            continue
        seen.add(key)
        if d.code in UNKNOWN_CODES and settings.unknown_values == "off":
            continue
        result.append(_lsp(conv, d, settings))
    return result


def _lsp(conv: Converter, d: Diagnostic, settings: Settings) -> types.Diagnostic:
    level: str = d.severity
    if d.code in UNKNOWN_CODES and settings.unknown_values != "off":
        level = settings.unknown_values
    data: dict[str, Any] | None = None
    if d.fix is not None:
        data = {"fix": d.fix, "title": actions.fix_title(d.code, d.fix)}
    return types.Diagnostic(
        range=conv.range(d.span),
        message=d.message,
        severity=_SEVERITY.get(level, types.DiagnosticSeverity.Warning),
        code=d.code,
        source=SOURCE,
        data=data,
    )

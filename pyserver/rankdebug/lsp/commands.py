"""``workspace/executeCommand`` handlers for the extension, with typed (attrs) arguments.

Each command takes one argument object (camelCase JSON, as below) and returns JSON:

- ``rankdebug.plan`` ``{uri, position | line} | {text, line?, language?} | {argv}``
  → the launch plan (the ``rankdebug plan --json`` object, plus a short ``title``), or
  ``{"error": {...}}``.
- ``rankdebug.debugPlan`` ``{... as plan, ranks?, settings?, breakpoints?, arm?}`` → the
  debug plan (``rankdebug.debugplan``): what to run (``argv``, ``env``, ``cwd``), a
  ``title``, the chosen ``ranks``, per-rank ``rankdebug`` attach ``configurations`` and a
  ``compound``, and ``armed``. ``arm``: every rank can be attached,
  evaluated in or read later (``rankdebug launch --arm``); with no ``ranks``, none is
  debugged from the start.
- ``rankdebug.launchJson`` ``{... as plan, ranks?, settings?}`` → ``configurations`` and
  ``compounds`` for ``.vscode/launch.json`` (types ``rankdebug`` and ``debugpy``).
- ``rankdebug.checkRanks`` ``{spec, allowArm?, ranks?, worldSize?, coords?}`` → the
  quick-pick's typed choice checked against the plan's ranks: ``{rankSpec, ranks, arm}``; a
  selector (``tp=0``) is resolved through ``coords`` (the plan's ``coords``: ``dims`` and
  ``ranks``, one ``{dimension: index}`` per rank).

Running jobs are listed by ``rankdebug jobs --json`` (the one way to list them).

``position`` and ``line`` are 0-based (LSP); ``{"error": {...}}`` lines are 1-based, as
the CLI prints them.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

import attrs
from pygls import uris

from rankdebug import debugplan
from rankdebug import ranks as rankspec
from rankdebug.command import CommandError, LaunchPlan, plan_text
from rankdebug.command.plan import RankInfo
from rankdebug.debugplan import Origin
from rankdebug.debugplan.launch_json import launch_json
from rankdebug.errors import BadInput, RankdebugError, envelope
from rankdebug.lsp.analysis import env_kwargs
from rankdebug.lsp.documents import language_of
from rankdebug.lsp.settings import Settings, apply

T = TypeVar("T")


@attrs.define
class Position:
    line: int
    character: int = 0


@attrs.define
class PlanArgs:
    """Where the command is: an open or saved document and a position, a text, or an argv."""

    uri: str | None = None
    position: Position | None = None
    line: int | None = None
    text: str | None = None
    language: str | None = None
    argv: list[str] | None = None
    # Overrides of the server's settings for this request (camelCase, as in settings),
    # e.g. {"cwd": ...} for a command typed in a terminal.
    settings: dict[str, Any] | None = None


@attrs.define
class DebugPlanArgs(PlanArgs):
    # "1,3", "0-3", "all", "local0", or a list of rank numbers.
    ranks: Any = None
    # "FILE:LINE" breakpoints known at start.
    breakpoints: list[str] | None = None
    # Every rank serves a control socket (rankdebug launch --arm): attach, eval and stacks
    # later. With no ranks given, no rank is debugged from the start.
    arm: bool = False


@attrs.define
class LaunchJsonArgs(DebugPlanArgs):
    pass


class Host(Protocol):
    """What the commands need from the server."""

    @property
    def executor(self) -> Executor: ...

    def settings_for(self, path: str | None) -> Settings: ...

    def open_document(self, uri: str) -> tuple[str, str | None, str | None] | None:
        """(text, path, language) of an open document, else None."""
        ...

    def workspace_folder(self, path: str | None) -> str | None: ...


class ArgumentError(ValueError):
    pass


@dataclass
class Source:
    uri: str | None
    path: str | None
    text: str | None
    argv: list[str] | None
    language: str | None
    line: int  # 1-based
    settings: Settings
    dirty: bool = False


A = TypeVar("A", bound="PlanArgs")


def read_args(kind: type[A], raw: tuple[Any, ...], structure: Callable[[Any, type[A]], A],
              command: str) -> A | dict[str, Any]:
    """A command's one argument object, checked: the typed arguments, or the error
    envelope to answer (never an LSP error: the extension shows the message)."""
    if len(raw) != 1 or not isinstance(raw[0], dict):
        return envelope(f"{command} takes one argument, an object such as "
                        '{"uri": ..., "line": 0} or {"text": "torchrun ..."}')
    try:
        return structure(raw[0], kind)
    except Exception as exc:  # cattrs' errors nest; the first leaf says what was wrong
        return envelope(f"{command}: bad arguments ({_first_leaf(exc)})")


def _first_leaf(exc: BaseException) -> str:
    while isinstance(getattr(exc, "exceptions", None), (list, tuple)) and exc.exceptions:  # type: ignore[attr-defined]
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    notes = getattr(exc, "__notes__", None) or []
    text = f"{notes[0]}: " if notes else ""
    return (text + (str(exc) or type(exc).__name__))[:300]


def _error(exc: RankdebugError | ArgumentError) -> dict[str, Any]:
    if isinstance(exc, RankdebugError):
        return exc.to_json()
    return envelope(str(exc))


def _line(args: PlanArgs) -> int:
    if args.position is not None:
        return args.position.line + 1
    if args.line is not None:
        return args.line + 1
    return 1


def _source(host: Host, args: PlanArgs, problems: list[str]) -> Source:
    overrides = getattr(args, "settings", None)
    if args.argv is not None:
        if not args.argv or not all(isinstance(a, str) for a in args.argv):
            raise ArgumentError("argv must be a non-empty list of strings")
        settings = host.settings_for(None)
        if overrides:
            settings = apply(settings, overrides, problems)
        return Source(None, None, None, list(args.argv), None, 1, settings)
    if args.text is not None:
        settings = host.settings_for(None)
        if overrides:
            settings = apply(settings, overrides, problems)
        lang = language_of(args.language, None) or "shell"
        return Source(None, None, args.text, None, lang, _line(args), settings)
    if not args.uri:
        raise ArgumentError("give uri with position or line, text, or argv")
    path = uris.to_fs_path(args.uri)
    settings = host.settings_for(path)
    if overrides:
        settings = apply(settings, overrides, problems)
    opened = host.open_document(args.uri)
    if opened is not None:
        text, doc_path, doc_lang = opened
        return Source(args.uri, doc_path or path, text, None, doc_lang or "shell", _line(args),
                      settings)
    if path is None:
        raise ArgumentError(f"{args.uri} is neither open nor a file")
    return Source(args.uri, path, None, None, language_of(None, path) or "shell", _line(args),
                  settings)


def _plan(src: Source, for_run: bool = False) -> LaunchPlan:
    """Plan the source (in a worker thread). Raises CommandError.

    ``for_run``: the job will start from here, so it sees this process's environment (plus
    the ``env`` setting), as ``rankdebug launch`` will when it plans the command again."""
    settings = src.settings
    cwd = settings.resolve_cwd(src.path)
    env, complete = (settings.run_env(), True) if for_run else settings.caller_env()
    if src.argv is not None:
        from rankdebug import command

        plan_argv: Callable[..., LaunchPlan] = command.plan_argv
        return plan_argv(src.argv, cwd=cwd or Path.cwd(),
                         **env_kwargs(plan_argv, env, complete))
    text: str | bytes
    if src.text is not None:
        text = src.text
    else:
        assert src.path is not None
        try:
            text = Path(src.path).read_bytes()
        except OSError as exc:
            raise CommandError(f"cannot read {src.path}: {exc.strerror or exc}") from exc
    return plan_text(text, src.line, path=src.path, language=src.language, cwd=cwd,
                     **env_kwargs(plan_text, env, complete))


async def _in_pool(host: Host, fn: Callable[..., T], *args: Any) -> T:
    return await asyncio.get_running_loop().run_in_executor(host.executor, fn, *args)


async def plan(host: Host, args: PlanArgs) -> dict[str, Any]:
    problems: list[str] = []
    try:
        src = _source(host, args, problems)
        result = await _in_pool(host, _plan, src)
    except (ArgumentError, BadInput) as exc:
        return _error(exc)
    reply = result.to_json()
    reply["title"] = debugplan.title_of(result)
    return reply


# -- debugPlan, launchJson: adapters over rankdebug.debugplan ----------------------


def _origin(src: Source) -> Origin:
    if src.argv is not None:
        return Origin.of_argv(src.argv)
    if src.path is not None and src.uri is not None and src.uri.startswith("file:"):
        return Origin.of_file(src.path, src.text)
    return Origin.of_text(src.text or "")


def _cwd(src: Source, host: Host) -> str:
    cwd = src.settings.resolve_cwd(src.path)
    if cwd is not None:
        return str(cwd)
    if src.path:
        return os.path.dirname(src.path)
    return host.workspace_folder(None) or os.getcwd()


def _is_dirty(src: Source) -> bool:
    if src.text is None or src.path is None or src.uri is None or not src.uri.startswith("file:"):
        return False
    try:
        on_disk = Path(src.path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return True
    return on_disk.replace("\r\n", "\n") != src.text.replace("\r\n", "\n")


def _debug_plan(host: Host, src: Source, plan: LaunchPlan, args: DebugPlanArgs, *,
                base_port: int | None = None) -> debugplan.DebugPlan:
    settings = src.settings
    options = settings.launch_options(arm=args.arm, breaks=args.breakpoints or (),
                                      base_port=base_port)
    caller = debugplan.Caller(cwd=_cwd(src, host), cli=tuple(settings.cli()), env=settings.env)
    return debugplan.make(plan, _origin(src), caller, args.ranks, options)


async def debug_plan(host: Host, args: DebugPlanArgs) -> dict[str, Any]:
    problems: list[str] = []
    try:
        src = _source(host, args, problems)
        # One trip to the pool: each costs a thread hand-off on the path to the job's start.
        the_plan, dirty = await _in_pool(host, lambda: (_plan(src, True), _is_dirty(src)))
        dplan = _debug_plan(host, src, the_plan, args)
    except (ArgumentError, BadInput) as exc:
        return _error(exc)
    reply = dplan.to_json()
    if dirty:
        problems.append("the document has unsaved changes; rankdebug launch reads the file "
                        "on disk")
    reply["warnings"] = problems + reply["warnings"]
    return reply


async def smoke_command(host: Host, args: PlanArgs) -> dict[str, Any]:
    """``rankdebug smoke --json``'s answer for the command as the editor has it (unsaved
    text included), in the directory its commands run in, as ``debugPlan`` resolves it."""
    from rankdebug.smoke.rewrite import refuse_unfit, smoke  # loaded only when asked

    problems: list[str] = []
    try:
        src = _source(host, args, problems)
        the_plan = await _in_pool(host, _plan, src, True)
        refuse_unfit(the_plan)
        cwd = Path(_cwd(src, host))
        result = await _in_pool(host, lambda: smoke(the_plan, cwd=cwd))
    except (ArgumentError, BadInput) as exc:
        return _error(exc)
    return result.to_json()


async def launch_json_command(host: Host, args: LaunchJsonArgs) -> dict[str, Any]:
    problems: list[str] = []
    try:
        src = _source(host, args, problems)
        the_plan = await _in_pool(host, _plan, src)
        base = src.settings.base_port or src.settings.debugpy_base_port
        dplan = _debug_plan(host, src, the_plan, args, base_port=base)
        result = launch_json(dplan, workspace=host.workspace_folder(src.path),
                             extra_env=dict(src.settings.env))
    except (ArgumentError, BadInput) as exc:
        return _error(exc)
    result["warnings"] = problems + result["warnings"]
    return result


def _rank_infos(raw: Any) -> list[RankInfo]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ArgumentError("ranks must be a list of {rank, node_rank, local_rank}")
    out = []
    for item in raw:
        rank, node, local = (item.get(k) if isinstance(item, dict) else None
                             for k in ("rank", "node_rank", "local_rank"))
        if not isinstance(rank, int) or not all(
                f is None or (isinstance(f, int) and not isinstance(f, bool))
                for f in (rank, node, local)):
            raise ArgumentError("ranks must be a list of {rank, node_rank, local_rank}")
        out.append(RankInfo(rank, node, local))
    return out


_COORDS_SHAPE = "coords must be null or the plan's coords: {dims: {name: size}, ranks: [...]}"


def _index(value: Any) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)
            and 0 <= value <= rankspec.MAX_RANK)


def _coords_table(raw: Any) -> dict[int, dict[str, int]] | None:
    """The plan's ``coords`` as rank → {dimension: index}, checked (a client's JSON); None
    when absent. Only the dimensions ``dims`` names count."""
    if raw is None:
        return None
    dims = raw.get("dims") if isinstance(raw, dict) else None
    table = raw.get("ranks") if isinstance(raw, dict) else None
    if (not isinstance(dims, dict) or not 0 < len(dims) <= 16 or not isinstance(table, list)
            or len(table) > rankspec.MAX_RANK + 1
            or not all(isinstance(k, str) and _index(v) and v > 0 for k, v in dims.items())):
        raise ArgumentError(_COORDS_SHAPE)
    out: dict[int, dict[str, int]] = {}
    for rank, where in enumerate(table):
        if not isinstance(where, dict) or not all(
                _index(where.get(d)) and where[d] < size for d, size in dims.items()):
            raise ArgumentError(f"{_COORDS_SHAPE} (rank {rank}'s coordinates do not fit dims)")
        out[rank] = {d: where[d] for d in dims}
    return out


async def check_ranks(host: Host, raw: dict[str, Any]) -> dict[str, Any]:
    """``{spec, allowArm?, ranks?, worldSize?, coords?}``: a rank choice as typed in the
    quick-pick, checked against the plan's ranks (a selector through its ``coords``) →
    ``{rankSpec, ranks, arm}`` or ``{"error": ...}``."""
    del host
    spec, size = raw.get("spec"), raw.get("worldSize")
    try:
        if not isinstance(spec, str):
            raise ArgumentError("spec must be a string like '1,3'")
        if size is not None and (not isinstance(size, int) or isinstance(size, bool)):
            raise ArgumentError("worldSize must be a number or null")
        choice = rankspec.parse_choice(spec, allow_arm=raw.get("allowArm") is True)
        if not choice.spec:
            return {"rankSpec": "", "ranks": [], "arm": choice.arm}
        table = _coords_table(raw.get("coords")) if rankspec.is_selector(choice.spec) else None
        sel = rankspec.select(choice.spec, _rank_infos(raw.get("ranks")), size, table)
    except (ArgumentError, BadInput) as exc:
        return _error(exc)
    return {"rankSpec": sel.spec, "ranks": sel.ranks, "arm": choice.arm}

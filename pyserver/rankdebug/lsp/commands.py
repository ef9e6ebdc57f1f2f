"""``workspace/executeCommand`` handlers for the extension, with typed (attrs) arguments.

Each command takes one argument object (camelCase JSON, as below) and returns JSON:

- ``rankdebug.plan`` ``{uri, position | line} | {text, line?, language?} | {argv}``
  → the launch plan (the ``rankdebug plan --json`` object), or ``{"error": {...}}``.
- ``rankdebug.debugPlan`` ``{... as plan, ranks?, settings?, breakpoints?, arm?}`` → what
  to run (``argv``, ``env``, ``cwd``), the chosen ``ranks``, per-rank ``rankdebug`` attach
  ``configurations`` and a ``compound``, and ``armed``. ``arm``: every rank can be attached,
  evaluated in or read later (``rankdebug launch --arm``); with no ``ranks``, none is
  debugged from the start.
- ``rankdebug.launchJson`` ``{... as plan, ranks?, settings?}`` → ``configurations`` and
  ``compounds`` for ``.vscode/launch.json`` (types ``rankdebug`` and ``debugpy``).
- ``rankdebug.jobs`` ``{}`` → running jobs from the job registry.

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

from rankdebug.command import CommandError, LaunchPlan, plan_text
from rankdebug.lsp import launch_json
from rankdebug.lsp.analysis import env_kwargs
from rankdebug.lsp.documents import language_of
from rankdebug.lsp.settings import Settings, apply

T = TypeVar("T")
DEFAULT_RANKS = "0"


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


@attrs.define
class JobsArgs:
    # Include jobs whose supervisor is gone.
    all: bool = False


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


def _error(message: str, line: int | None = None, column: int | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "line": line, "column": column}}


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
    except ArgumentError as exc:
        return _error(str(exc))
    except CommandError as exc:
        return exc.to_json()
    return result.to_json()


# -- debugPlan ---------------------------------------------------------------------


def _rank_spec(raw: Any) -> str:
    if raw is None:
        return DEFAULT_RANKS
    if isinstance(raw, bool):
        raise ArgumentError("ranks must be a string like '1,3' or a list of numbers")
    if isinstance(raw, int):
        return str(raw)
    if isinstance(raw, str) and raw.strip():
        return raw.strip()
    if isinstance(raw, list) and raw and all(isinstance(r, int) and not isinstance(r, bool)
                                             and r >= 0 for r in raw):
        return ",".join(str(r) for r in sorted(set(raw)))
    raise ArgumentError("ranks must be a string like '1,3' or a list of numbers")


def resolve_ranks(spec: str, plan: LaunchPlan) -> tuple[str, list[int] | None]:
    """The canonical spec and the chosen ranks (None when only the job can tell).
    Raises ArgumentError for specs that are malformed or outside the job."""
    try:
        from rankdebug.ranks import RanksError, select
    except ImportError:
        parts = [p.strip() for p in spec.split(",") if p.strip()]
        if parts and all(p.isdigit() for p in parts):
            return spec, sorted({int(p) for p in parts})
        return spec, None
    try:
        sel = select(spec, plan.ranks, plan.world_size)
    except RanksError as exc:
        raise ArgumentError(str(exc)) from exc
    return sel.spec, sel.ranks


def _launch_argv(src: Source, plan: LaunchPlan, spec: str, settings: Settings,
                 breakpoints: list[str], *, base_port: int | None = None,
                 arm: bool = False) -> list[str]:
    argv = [*settings.cli(), "launch", "--json"]
    if spec:
        argv += ["--ranks", spec]
    if arm:
        argv.append("--arm")
    if not settings.wait:
        argv.append("--no-wait")
    if settings.host != "127.0.0.1":
        argv += ["--host", settings.host]
    port = settings.base_port if base_port is None else base_port
    if port:
        argv += ["--base-port", str(port)]
    if settings.collective_timeout is not None:
        argv += ["--collective-timeout", f"{settings.collective_timeout:g}"]
    if settings.attach_on != "start":
        argv += ["--attach", settings.attach_on]
    for bp in breakpoints:
        argv += ["--break", bp]
    if src.argv is not None:
        return [*argv, "--", *src.argv]
    if src.path is not None and src.uri is not None and src.uri.startswith("file:"):
        return [*argv, "--file", src.path, "--line", str(plan.span.start_line + 1)]
    words = [w.value for w in plan.argv]
    if any(w is None for w in words):
        raise ArgumentError("the command has words whose value is not known here, and it is "
                            "not in a saved file: save it first")
    env_words = [f"{k}={w.value}" for k, w in plan.env.items() if w.value is not None]
    return [*argv, "--", *env_words, *(w for w in words if w is not None)]


def _run_env(src: Source, plan: LaunchPlan, argv: list[str]) -> dict[str, str]:
    """Variables to add to the extension's environment for the run. With ``--file`` the
    launcher re-reads the script (exports included); a command passed after ``--`` from an
    unsaved document needs the variables its script exported before it."""
    env: dict[str, str] = {}
    if "--file" not in argv and src.text is not None:
        env.update({k: w.value for k, w in plan.script_env.items() if w.value is not None})
    env.update(src.settings.env)
    return env


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


def _breakpoints(raw: list[str] | None) -> list[str]:
    out = []
    for bp in raw or []:
        path, sep, line = bp.rpartition(":")
        if not sep or not path or not line.isdigit():
            raise ArgumentError(f"breakpoints take FILE:LINE, not {bp!r}")
        out.append(bp)
    return out


async def debug_plan(host: Host, args: DebugPlanArgs) -> dict[str, Any]:
    problems: list[str] = []
    try:
        src = _source(host, args, problems)
        the_plan = await _in_pool(host, _plan, src, True)
        chosen: list[int] | None
        if args.arm and args.ranks in (None, "", []):
            spec, chosen = "", []  # armed only: every rank waits to be asked
        else:
            spec, chosen = resolve_ranks(_rank_spec(args.ranks), the_plan)
        breaks = _breakpoints(args.breakpoints)
        argv = _launch_argv(src, the_plan, spec, src.settings, breaks, arm=args.arm)
        dirty = await _in_pool(host, _is_dirty, src)
    except ArgumentError as exc:
        return _error(str(exc))
    except CommandError as exc:
        return exc.to_json()
    warnings = list(problems)
    if dirty:
        warnings.append("the document has unsaved changes; rankdebug launch reads the file "
                        "on disk")
    if chosen is None:
        warnings.append(f"which ranks {spec!r} names is decided when the job starts; attach "
                        "to each as it reports listening")
    title = launch_json.title_of(the_plan)
    configs = launch_json.attach_rankdebug(the_plan, chosen or [], src.settings.host, None, None)
    return {
        "plan": the_plan.to_json(),
        "argv": argv,
        "env": _run_env(src, the_plan, argv),
        "cwd": _cwd(src, host),
        "rankSpec": spec,
        "ranks": chosen,
        "host": src.settings.host,
        "configurations": configs,
        "compound": launch_json.compound(f"{title} · ranks {spec}", configs),
        "armed": args.arm,
        "warnings": warnings,
    }


async def launch_json_command(host: Host, args: LaunchJsonArgs) -> dict[str, Any]:
    problems: list[str] = []
    try:
        src = _source(host, args, problems)
        the_plan = await _in_pool(host, _plan, src)
        spec, chosen = resolve_ranks(_rank_spec(args.ranks), the_plan)
        if chosen is None:
            raise ArgumentError(f"ranks {spec!r} cannot be resolved to rank numbers here; "
                                "give the ranks as numbers")
        base = src.settings.base_port or src.settings.debugpy_base_port
        terminal = _launch_argv(src, the_plan, spec, src.settings, _breakpoints(args.breakpoints),
                                base_port=base)
    except ArgumentError as exc:
        return _error(str(exc))
    except CommandError as exc:
        return exc.to_json()
    text = None
    if src.text is not None:
        lines = src.text.splitlines()
        span = the_plan.span
        text = "\n".join(lines[span.start_line:span.end_line + 1]) if span.end_line < len(
            lines) else None
    result = launch_json.launch_json(
        the_plan,
        chosen=chosen,
        rank_spec=spec,
        terminal_argv=terminal,
        host=src.settings.host,
        base_port=base,
        workspace=host.workspace_folder(src.path),
        command_text=text,
        extra_env=src.settings.env,
    )
    result["warnings"] = problems + result["warnings"]
    return result


# -- jobs --------------------------------------------------------------------------


def list_jobs(include_dead: bool = False) -> list[dict[str, Any]]:
    """Jobs in the registry, newest last; [] when the registry is not there (yet)."""
    try:
        from rankdebug.runtime import registry
    except ImportError:
        return []
    try:
        jobs = registry.list_jobs()
    except (OSError, getattr(registry, "RegistryError", OSError)):
        return []
    out: list[dict[str, Any]] = []
    for job in jobs:
        pid = job.get("pid")
        alive = isinstance(pid, int) and registry.pid_alive(pid)
        if not alive and not include_dead:
            continue
        out.append({**job, "alive": alive})
    return out


async def jobs(host: Host, args: JobsArgs | None = None) -> list[dict[str, Any]]:
    include = bool(args and args.all)
    return await _in_pool(host, list_jobs, include)

"""The debug plan: launch plan + rank choice + options + breakpoints → what to run.

One pure function, :func:`make`, turns a launch plan (``rankdebug.command``) and the user's
choices into a :class:`DebugPlan`: the ``rankdebug launch`` argv with its environment and
cwd, the resolved ranks, the per-rank attach configurations, their compound and a title.
Its ``to_json()`` is the ``rankdebug.debugPlan`` reply. The layers above are adapters: the
language server (``lsp.commands``), ``launch.json`` generation (:mod:`.launch_json`) and
``rankdebug launch`` (``supervise``, which starts :func:`job_env.job_run` of the plan).

    command (text → launch plan) → debugplan → supervise (processes) / the extension (sessions)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from rankdebug import ranks as rankspec
from rankdebug.command.coords import Layout, why_unknown
from rankdebug.command.plan import LaunchPlan
from rankdebug.debugplan.configs import attach_configurations, compound, title_of
from rankdebug.debugplan.launch_argv import launch_argv, run_env
from rankdebug.debugplan.model import DebugPlan
from rankdebug.debugplan.options import LaunchOptions, resolve_breaks
from rankdebug.debugplan.origin import Origin
from rankdebug.ranks import Selection

__all__ = ["Caller", "DebugPlan", "LaunchOptions", "Origin", "choose", "make", "title_of"]


def choose(raw: object, plan: LaunchPlan, *, arm: bool = False) -> Selection:
    """The ranks debugged from the start: ``raw`` (a spec, a selector such as ``tp=0``, a
    number or a list; default rank 0) checked against the plan. Armed with no ranks given:
    none."""
    if arm and raw in (None, "", []):
        return Selection("", [])  # armed only: every rank waits to be asked
    spec = rankspec.normalise(raw)
    if not rankspec.is_selector(spec):
        return rankspec.select(spec, plan.ranks, plan.world_size)
    found = plan.read_coords()  # a selector (tp=0) resolves through the command's layout
    return rankspec.select(spec, plan.ranks, plan.world_size,
                           found.table() if isinstance(found, Layout) else None,
                           hint=why_unknown(found))


@dataclass(frozen=True)
class Caller:
    """Who runs the plan: the argv prefix that runs rankdebug, where it runs, and the
    variables it adds (an editor's settings)."""

    cwd: str
    cli: tuple[str, ...] = ("rankdebug",)
    env: Mapping[str, str] = field(default_factory=dict)


def make(plan: LaunchPlan, origin: Origin, caller: Caller, ranks: object = None,
         options: LaunchOptions | None = None) -> DebugPlan:
    """The debug plan of ``plan`` (from ``origin``) with ``ranks`` chosen, run by
    ``caller``. Raises ``rankdebug.errors.BadInput`` (``RanksError`` for a rank spec) for
    choices that do not fit the plan."""
    options = options or LaunchOptions()
    selection = choose(ranks, plan, arm=options.arm)
    cwd = caller.cwd
    argv = launch_argv(caller.cli, origin, plan, selection.spec, options)
    title = title_of(plan)
    configs = attach_configurations(selection.ranks or [], options.host, None, None)
    warnings = []
    if selection.ranks is None:
        warnings.append(f"which ranks {selection.spec!r} names is decided when the job "
                        "starts; attach to each as it reports listening")
    return DebugPlan(
        plan=plan,
        origin=origin,
        selection=selection,
        options=options,
        cwd=cwd,
        breaks=tuple(resolve_breaks(options.breaks, plan.cwd or cwd)),
        argv=tuple(argv),
        env=run_env(origin, plan, caller.env),
        title=title,
        configurations=tuple(configs),
        compound=compound(f"{title} · ranks {selection.spec}", configs),
        warnings=tuple(warnings),
    )

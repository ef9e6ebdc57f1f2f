"""Hover text for launch commands.

On a launcher option: the option's meaning (from the launcher's option table) and its
value. Elsewhere on a command: launcher, nodes × processes per node = world size, the
entry and its arguments, the environment the command sets, and what is not known and why.
"""

from __future__ import annotations

import re

from lsprotocol import types

from rankdebug.command.plan import LaunchPlan, OptionUse
from rankdebug.command.words import Word
from rankdebug.lsp.analysis import UNKNOWN_CODES, Analysis
from rankdebug.lsp.lenses import rank_count
from rankdebug.lsp.positions import contains

MAX_ITEMS = 12
MAX_TEXT = 120


def hover(analysis: Analysis, position: types.Position) -> types.Hover | None:
    row, col = analysis.converter.from_client(position)
    cmd = analysis.command_at(row)
    if cmd is None:
        return None
    plan = cmd.plan
    for use in plan.options:
        if plan.followed is None and contains(use.span, row, col):
            return types.Hover(
                contents=types.MarkupContent(kind=types.MarkupKind.Markdown,
                                             value=option_text(plan, use)),
                range=analysis.converter.range(use.span),
            )
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=summary(plan)),
        range=cmd.range,
    )


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>#|~])")


def _plain(text: str) -> str:
    """Free text (an engine message) shown as is, not as Markdown or HTML."""
    return _MD_SPECIAL.sub(r"\\\1", text)


def _code(text: str) -> str:
    text = text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"
    ticks = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _word(word: Word | None) -> str:
    if word is None:
        return "not given"
    if word.value is not None:
        return _code(word.value)
    why = f" ({word.reason})" if word.reason else ""
    return f"{_code(word.display)}, not known here{why}"


def option_help(plan: LaunchPlan, name: str) -> str | None:
    try:
        from rankdebug.command.launchers import spec_for
    except ImportError:  # the launcher table is not there: no meanings to show
        return None
    spec = spec_for(plan.launcher)
    if spec is None:
        return None
    opt = spec.by_name.get(name)
    return opt.help if opt is not None and opt.help else None


def option_text(plan: LaunchPlan, use: OptionUse) -> str:
    lines = [f"**{use.flag}** · {plan.launcher} option `{use.name}`"]
    meaning = option_help(plan, use.name)
    if meaning:
        lines += ["", _plain(meaning)]
    if use.value is not None:
        lines += ["", f"Value: {_word(use.value)}"]
    return "\n".join(lines)


def _nproc(plan: LaunchPlan) -> str:
    n = plan.nproc_per_node
    if n is None:
        return "?"
    if isinstance(n, int):
        return str(n)
    if plan.visible_devices is not None and n in ("gpu", "auto"):
        return f"{n} ({plan.visible_devices} visible)"
    return str(n)


def _nodes(plan: LaunchPlan) -> str:
    if plan.nnodes_range is not None:
        low, high = plan.nnodes_range
        return f"{low}–{high} nodes"
    if plan.nnodes is None:
        return "? nodes"
    return f"{plan.nnodes} node" + ("" if plan.nnodes == 1 else "s")


def _header(plan: LaunchPlan) -> list[str]:
    n = rank_count(plan)
    world = "?" if n is None else str(n)
    ranks = "rank" if n == 1 else "ranks"
    out = [
        f"**{plan.launcher}** · {_nodes(plan)} × {_nproc(plan)} processes per node "
        f"= **{world} {ranks}**"
    ]
    if plan.node_rank not in (None, 0) or (plan.nnodes or 1) > 1:
        out.append(f"This node: node rank {'?' if plan.node_rank is None else plan.node_rank}")
    return out


def _runs(plan: LaunchPlan) -> str:
    entry = plan.entry
    if entry is None:
        return "**Runs** nothing known"
    line = f"**Runs** {entry.kind} {_word(entry.target)}"
    if plan.entry_args:
        line += " " + _code(" ".join(w.display for w in plan.entry_args))
    return line


def _environment(plan: LaunchPlan) -> list[str]:
    out = []
    if plan.env:
        items = [f"{_code(f'{k}={w.display}')}" for k, w in list(plan.env.items())[:MAX_ITEMS]]
        out.append("**Sets** " + " ".join(items))
    if plan.script_env:
        names = list(plan.script_env)[:MAX_ITEMS]
        more = len(plan.script_env) - len(names)
        out.append("**Exported by the script** " + ", ".join(_code(k) for k in names)
                   + (f" and {more} more" if more > 0 else ""))
    return out


def _where(plan: LaunchPlan) -> list[str]:
    out = []
    if plan.master_addr is not None or plan.master_port is not None:
        out.append(f"**Master** {_word(plan.master_addr)} port {_word(plan.master_port)}")
    if plan.cwd:
        out.append(f"**Working directory** {_code(plan.cwd)}")
    if plan.background:
        out.append("Runs in the background (`&`).")
    if plan.followed:
        out.append(f"Planned from the command at {_code(plan.followed)}.")
    return out


def _findings(plan: LaunchPlan) -> list[str]:
    out = []
    unknown = [d.message for d in plan.diagnostics if d.code in UNKNOWN_CODES]
    notes = [d.message for d in plan.diagnostics
             if d.code not in UNKNOWN_CODES and d.severity != "info"]
    if unknown:
        items = [f"- {_plain(m)}" for m in unknown[:MAX_ITEMS]]
        if len(unknown) > MAX_ITEMS:
            items.append(f"- and {len(unknown) - MAX_ITEMS} more")
        out.append("**Not known here**\n\n" + "\n".join(items))
    if notes:
        out.append("**Warnings**\n\n" + "\n".join(f"- {_plain(m)}" for m in notes[:MAX_ITEMS]))
    return out


def summary(plan: LaunchPlan) -> str:
    """The hover's Markdown: ranks, what runs, its environment, where, and findings."""
    out = [*_header(plan), _runs(plan), *_environment(plan), *_where(plan), *_findings(plan)]
    return "\n\n".join(out)

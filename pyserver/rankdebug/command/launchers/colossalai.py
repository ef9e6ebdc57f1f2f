"""``colossalai run``.

Options are colossalai/cli/launcher/__init__.py's click command (0.5): exact
spellings only (click takes no abbreviations), ``--ssh-port`` with a dash and the
rest with underscores. ``--nproc_per_node`` is required. Nodes come from ``--host
h1,h2`` or from ``--hostfile`` (one host name a line, filtered by
``--include``/``--exclude`` and cut to ``--num_nodes``); without either the job runs
on this machine. ``-m MODULE`` runs a module.
"""

from __future__ import annotations

from collections.abc import Sequence

from rankdebug import launcher_table
from rankdebug.command.launchers.base import Context
from rankdebug.command.launchers.common import (
    basename,
    hostfile_not_read,
    launcher_entry,
    not_known,
    option_int,
    product,
    read_hostfile,
    resolve_int,
    set_entry,
    setting,
)
from rankdebug.command.options import Opt, Parsed, Spec, parse_options, value
from rankdebug.command.plan import LaunchPlan
from rankdebug.command.words import Word

ROW = launcher_table.BY_NAME["colossalai"]
NAME = ROW.name

OPTIONS: tuple[Opt, ...] = (
    value("host", "-H", "-host", "--host", help="Hosts to run on: host1,host2."),
    value("hostfile", "--hostfile", help="File with one host name a line."),
    value("include", "--include", help="Hosts of the hostfile to use: host1,host2."),
    value("exclude", "--exclude", help="Hosts of the hostfile not to use."),
    value("num_nodes", "--num_nodes", help="Use the first N hosts of the hostfile."),
    value("nproc_per_node", "--nproc_per_node", help="Processes (GPUs) on each node."),
    value("master_port", "--master_port", help="Port of node 0 (default 29500)."),
    value("master_addr", "--master_addr", help="Address of node 0."),
    value("extra_launch_args", "--extra_launch_args", help="More torchrun options: a=1,b=2."),
    value("ssh_port", "--ssh-port", help="SSH port of the other nodes."),
    Opt("m", ("-m",), help="Run this module (ends the options).", ends=True),
)

SPEC = Spec("colossalai run", OPTIONS)


def matches(argv: Sequence[Word]) -> int | None:
    if len(argv) > 1 and basename(argv[0]) in ROW.programs and argv[1].value == "run":
        return 2
    return None


def parse(ctx: Context, start: int) -> None:
    plan = ctx.plan
    parsed = parse_options(plan, plan.argv, start, SPEC)
    here = plan.argv[start - 1].span
    found = setting(ctx, parsed, "nproc_per_node")
    if found is None and not parsed.opaque:
        plan.warn("colossalai run needs --nproc_per_node", here, code="missing-value",
                  severity="error")
        per_node = None
    else:
        per_node = resolve_int(plan, found, parsed, None, "--nproc_per_node")
    plan.nproc_per_node = per_node
    plan.nnodes = _nodes(ctx, parsed)
    plan.world_size = product(plan.nnodes, per_node)
    if plan.nnodes == 1:
        plan.node_rank = 0
    elif plan.nnodes is not None:
        plan.warn(f"colossalai run starts all {plan.nnodes} nodes from here over ssh", here,
                  severity="info", code="multi-node")
    plan.master_addr = parsed.word("master_addr")
    plan.master_port = parsed.word("master_port")

    module = parsed.get("m")
    if module is not None and module.value is not None and module.value_index is not None:
        index = module.value_index
        set_entry(plan, "module", module.value, index, index + 1)
        return
    launcher_entry(plan, parsed, "colossalai run", "script")


def _names(word: Word | None) -> list[str] | None:
    if word is None or word.value is None:
        return None
    return [h for h in word.value.strip().split(",") if h]


def _nodes(ctx: Context, parsed: Parsed) -> int | None:
    plan: LaunchPlan = ctx.plan
    hostfile = parsed.get("hostfile")
    host = parsed.get("host")
    if hostfile is not None:
        if host is not None:
            plan.warn("--host and --hostfile cannot be used together", host.record.span,
                      code="conflict", severity="error")
        return _hostfile_nodes(ctx, parsed, hostfile.value)
    if host is not None:
        listed = _names(host.value)
        if listed is None:
            if host.value is not None:
                not_known(plan, host.flag, host.value)
            return None
        return len(listed) or 1
    if parsed.opaque:
        return resolve_int(plan, None, parsed, 1, "--host/--hostfile")
    return 1


def _hostfile_nodes(ctx: Context, parsed: Parsed, word: Word | None) -> int | None:
    """The hosts of ``--hostfile``, filtered by --include/--exclude and cut to --num_nodes."""
    plan = ctx.plan
    hosts = read_hostfile(ctx, word)
    num = option_int(ctx, parsed, "num_nodes", -1)
    if hosts is None:
        if word is not None:
            hostfile_not_read(plan, "--hostfile", word)
        return num if num is not None and num > 0 else None
    names: list[str] = [h for h, _slots in hosts]
    include = parsed.get("include")
    exclude = parsed.get("exclude")
    if include is not None:
        wanted = _names(include.value)
        if wanted is None:
            return None
        names = [h for h in names if h in wanted]
    elif exclude is not None:
        unwanted = _names(exclude.value)
        if unwanted is None:
            return None
        names = [h for h in names if h not in unwanted]
    if num is None:
        return None
    if num > 0:
        names = names[:num]
    return len(names) or 1

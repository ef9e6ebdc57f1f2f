"""deepspeed and ``python -m deepspeed.launcher.runner``.

Options are deepspeed/launcher/runner.py's ``parse_args()`` (0.19, plus the elastic
and Slurm options of earlier releases): argparse with abbreviations, underscore
spellings only.

Resources follow runner.main(): the hostfile (``--hostfile``, default
/job/hostfile) lists ``host slots=N``; without a readable one the job runs on this
machine with its visible devices. ``--include``/``--exclude`` (``host:0,1@host2``)
filter the pool, ``--num_nodes`` keeps the first N hosts, ``--num_gpus`` sets the
slots per host. With none of those and no hostfile, CUDA_VISIBLE_DEVICES decides.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from rankdebug import launcher_table
from rankdebug.command.launchers.base import Context
from rankdebug.command.launchers.common import (
    can_check,
    device_count,
    flag_kind,
    hostfile_not_read,
    launcher_entry,
    not_known,
    option_int,
    program_or_module,
    read_hostfile,
    uniform,
    visible_var,
)
from rankdebug.command.options import Opt, Parsed, Spec, Use, flag, parse_options, value
from rankdebug.command.plan import LaunchPlan
from rankdebug.command.words import Span, Word

ROW = launcher_table.BY_NAME["deepspeed"]
NAME = ROW.name
DEFAULT_HOSTFILE = "/job/hostfile"

OPTIONS: tuple[Opt, ...] = (
    value("hostfile", "-H", "--hostfile", help="MPI-style hostfile: `host slots=N` lines."),
    value("include", "-i", "--include", help="Resources to use: host[:slot,...][@host...]."),
    value("exclude", "-e", "--exclude", help="Resources not to use, same format as --include."),
    value("num_nodes", "--num_nodes", help="Use the first N hosts of the hostfile."),
    value("min_elastic_nodes", "--min_elastic_nodes", help="Minimum nodes (elastic training)."),
    value("max_elastic_nodes", "--max_elastic_nodes", help="Maximum nodes (elastic training)."),
    value("num_gpus", "--num_gpus", "--num_accelerators", help="GPUs to use on each node."),
    value("master_port", "--master_port", help="Port of node 0 (default 29500)."),
    value("master_addr", "--master_addr", help="Address of node 0."),
    value("node_rank", "--node_rank", help="Rank of this node (with --no_ssh)."),
    value("launcher", "--launcher", help="Multi-node backend: pdsh, openmpi, mvapich, slurm..."),
    value("launcher_args", "--launcher_args", help="Extra arguments for the backend."),
    flag("module", "--module", help="Run the entry as a module, like python -m."),
    flag("no_python", "--no_python", help="Run the entry as a program, without python."),
    flag("no_local_rank", "--no_local_rank", help="Do not pass --local_rank to the script."),
    flag("no_ssh", "--no_ssh", help="Launch each node separately, without ssh."),
    flag("no_ssh_check", "--no_ssh_check", help="Skip the ssh check."),
    flag("force_multi", "--force_multi", help="Use the multi-node launcher for one node."),
    flag("save_pid", "--save_pid", help="Save the launcher's pid to /tmp."),
    value("enable_each_rank_log", "--enable_each_rank_log", help="Directory for per-rank logs."),
    value("autotuning", "--autotuning", help="Run the autotuner: tune or run."),
    value("comment", "--comment", help="Comment passed to srun (Slurm launcher)."),
    value("account", "--account", help="Account passed to srun (Slurm launcher)."),
    flag("elastic_training", "--elastic_training", help="Enable elastic training."),
    flag("bind_cores_to_rank", "--bind_cores_to_rank", help="Bind each rank to its own cores."),
    value("bind_core_list", "--bind_core_list", help="Cores to bind, e.g. 1,3-5,7."),
    value("ssh_port", "--ssh_port", help="SSH port for remote nodes."),
    value("venv_script", "--venv_script", help="Script sourced on each node first."),
    value("log_level", "--log_level", help="Launcher log level."),
    flag("quiet", "-q", "--quiet", help="Log errors only."),
)

SPEC = Spec(NAME, OPTIONS, abbrev=True, argparse=True)


def matches(argv: Sequence[Word]) -> int | None:
    return program_or_module(argv, ROW)


def parse_resources(text: str) -> dict[str, list[int]] | None:
    """``host1:0,1@host2`` → {host1: [0, 1], host2: []}; None when malformed."""
    out: dict[str, list[int]] = {}
    for spec in text.split("@"):
        host, sep, slots = spec.partition(":")
        if not host:
            return None
        items: list[int] = []
        if sep:
            for item in slots.split(","):
                if not item.strip().isdigit():
                    return None
                items.append(int(item))
        out.setdefault(host, [])
        out[host] = sorted(set(out[host] + items))
    return out


def parse(ctx: Context, start: int) -> None:
    plan = ctx.plan
    parsed = parse_options(plan, plan.argv, start, SPEC)
    here = _here(plan, parsed)
    asked = _asked(ctx, parsed)
    pool = _pool(ctx, parsed, asked)
    hosts = _narrow(plan, parsed, asked, pool) if pool is not None else None
    if pool is None or hosts is None:
        _unknown_pool(plan, parsed, asked)
    else:
        _count(ctx, parsed, asked, _Pool(hosts, pool.local))
    _node_rank(ctx, parsed)

    port = parsed.word("master_port")
    plan.master_port = port if port is not None else Word.literal("29500", here)
    plan.master_addr = parsed.word("master_addr")

    launcher_entry(plan, parsed, NAME, flag_kind(parsed))
    if not parsed.has("no_local_rank") and plan.entry is not None:
        plan.warn("deepspeed appends --local_rank=N to the script's arguments; "
                  "add --no_local_rank to leave them as written",
                  here, severity="info", code="local-rank-arg")


def _here(plan: LaunchPlan, parsed: Parsed) -> Span:
    """The launcher's word, where diagnostics about the whole command go."""
    return plan.argv[parsed.start - 1].span if parsed.start else plan.span


def _span(parsed: Parsed, name: str) -> Span | None:
    use = parsed.get(name)
    return use.record.span if use else None


def _backend(parsed: Parsed) -> str:
    word = parsed.word("launcher")
    return (word.display if word is not None else "pdsh") or "pdsh"


_Filter = dict[str, list[int]] | None | bool


def _filter(plan: LaunchPlan, parsed: Parsed, name: str) -> _Filter:
    """False: not given; None: given but not known; else the parsed resource spec."""
    use = parsed.get(name)
    if use is None or use.value is None:
        return False
    word = use.value
    if word.value is None:
        not_known(plan, use.flag, word)
        return None
    if word.value == "":
        return False
    spec = parse_resources(word.value)
    if spec is None:
        plan.warn(f"{use.flag} {word.value!r} is not NAME[:SLOT[,SLOT...]][@NAME...]",
                  word.span, code="bad-value", severity="error")
    return spec


@dataclass(frozen=True)
class _Asked:
    """What the command line asks for: numbers are -1 when not given, None when not known."""

    num_nodes: int | None
    num_gpus: int | None
    include: _Filter
    exclude: _Filter

    @property
    def filtered(self) -> bool:
        return self.include is not False or self.exclude is not False


@dataclass(frozen=True)
class _Pool:
    """Hosts and their slots (None: not known), and whether they are this machine."""

    hosts: dict[str, int | None]
    local: bool


def _asked(ctx: Context, parsed: Parsed) -> _Asked:
    plan = ctx.plan
    asked = _Asked(
        option_int(ctx, parsed, "num_nodes", -1),
        option_int(ctx, parsed, "num_gpus", -1),
        _filter(plan, parsed, "include"),
        _filter(plan, parsed, "exclude"),
    )
    if asked.include is not False and asked.exclude is not False:
        plan.warn("--include and --exclude cannot be used together", _span(parsed, "exclude"),
                  code="conflict", severity="error")
    if asked.filtered and (parsed.has("num_nodes") or parsed.has("num_gpus")):
        plan.warn("deepspeed does not take --num_nodes/--num_gpus with --include/--exclude",
                  _span(parsed, "num_gpus") or _span(parsed, "num_nodes"), code="conflict",
                  severity="error")
    return asked


def _pool(ctx: Context, parsed: Parsed, asked: _Asked) -> _Pool | None:
    """Hosts and slots before the filters; None when they are not known."""
    plan = ctx.plan
    use = parsed.get("hostfile")
    if use is not None:
        return _hostfile_pool(ctx, parsed, asked, use)
    hosts = read_hostfile(ctx, Word.literal(DEFAULT_HOSTFILE))
    if hosts is not None:
        plan.warn(f"deepspeed reads the default hostfile {DEFAULT_HOSTFILE}",
                  plan.span, severity="info", code="default-hostfile")
        return _Pool(_hosts_pool(plan, hosts, None), False)
    if _exists(DEFAULT_HOSTFILE):
        plan.warn(f"the default hostfile {DEFAULT_HOSTFILE} exists but cannot be read here, "
                  "so the nodes deepspeed uses are not known", _here(plan, parsed),
                  code="unreadable-file")
        return None
    # A fact of this machine, as runner.fetch_hostfile finds it when the job starts here.
    plan.warn(f"no hostfile given and {DEFAULT_HOSTFILE} does not exist here: DeepSpeed runs "
              "on this node only", _here(plan, parsed), severity="info", code="no-hostfile")
    return _local(ctx, parsed, asked)


def _exists(path: str) -> bool:
    # (os.path.isfile itself answers False on OSError; a function of its own for the tests.)
    return os.path.isfile(path)


def _hostfile_pool(ctx: Context, parsed: Parsed, asked: _Asked, use: Use) -> _Pool | None:
    """The pool of ``--hostfile FILE``."""
    plan = ctx.plan
    word = use.value
    if word is None:
        return None
    hosts = read_hostfile(ctx, word)
    if hosts is not None:
        return _Pool(_hosts_pool(plan, hosts, word), False)
    if word.value is not None and can_check(ctx, word.value):
        # runner.fetch_hostfile: no such file means this machine only.
        plan.warn(f"the hostfile {word.value} does not exist, so deepspeed runs on "
                  "this machine only", word.span, severity="info", code="no-hostfile")
        return _local(ctx, parsed, asked)
    hostfile_not_read(plan, use.flag, word)
    return None


def _local(ctx: Context, parsed: Parsed, asked: _Asked) -> _Pool:
    """No hostfile: this machine, with the devices it has."""
    plan = ctx.plan
    num_nodes = asked.num_nodes
    if num_nodes is not None and num_nodes > 1:
        plan.warn("--num_nodes is more than 1 but there is no hostfile: deepspeed will fail",
                  _span(parsed, "num_nodes"), code="no-hostfile", severity="error")
    # One node: this machine. CUDA_VISIBLE_DEVICES counts only without filters.
    count: int | None = None
    if not asked.filtered and asked.num_gpus == -1 and num_nodes is not None and (
        num_nodes <= 1 and visible_var(ctx) is not None
    ):
        count = device_count(ctx, "the number of GPUs deepspeed uses", _here(plan, parsed))
    return _Pool({"localhost": count}, True)


def _narrow(
    plan: LaunchPlan, parsed: Parsed, asked: _Asked, pool: _Pool
) -> dict[str, int | None] | None:
    """The hosts and slots --include/--exclude, --num_nodes and --num_gpus leave; None when
    they are not known."""
    hosts: dict[str, int | None] | None = pool.hosts
    include, exclude = asked.include, asked.exclude
    if isinstance(include, dict):
        if pool.local and set(include) - {"localhost"}:
            plan.warn("deepspeed has no hostfile here, so the hosts --include names "
                      "are not found", _span(parsed, "include"), code="no-hostfile",
                      severity="error")
        hosts = _include(pool.hosts, include)
    elif isinstance(exclude, dict):
        hosts = _exclude(pool.hosts, exclude)
    elif include is None or exclude is None:
        hosts = dict.fromkeys(pool.hosts) if pool.local else None
    if hosts is None or (asked.num_nodes is None and (not pool.local or parsed.opaque)):
        return None  # --num_nodes (or a hostfile) may be in words not known here
    if asked.num_nodes is not None and asked.num_nodes > 0:
        hosts = dict(list(hosts.items())[: asked.num_nodes])
    if asked.num_gpus is not None and asked.num_gpus > 0:
        return dict.fromkeys(hosts, asked.num_gpus)
    if asked.num_gpus is None:
        return dict.fromkeys(hosts)
    return hosts


def _count(ctx: Context, parsed: Parsed, asked: _Asked, pool: _Pool) -> None:
    """The plan's numbers from the hosts and slots used."""
    plan = ctx.plan
    here = _here(plan, parsed)
    counts = list(pool.hosts.values())
    plan.nnodes = len(pool.hosts)
    plan.nproc_per_node = uniform(counts)
    if all(c is not None for c in counts):
        plan.world_size = sum(c or 0 for c in counts)
    elif parsed.opaque:
        return  # the slots may be in words not known here
    elif pool.local and not asked.filtered and asked.num_gpus == -1 and (
        visible_var(ctx) is None or (asked.num_nodes is not None and asked.num_nodes > 1)
    ):
        device_count(ctx, "the number of GPUs deepspeed uses", here)
    elif pool.local and asked.include is not None and asked.exclude is not None and (
        asked.filtered
    ):
        plan.warn("with --include/--exclude deepspeed counts every GPU of the machine, "
                  "which is not known", here)
    elif not pool.local:
        plan.warn("the hostfile does not give every node's slots", here)


def _node_rank(ctx: Context, parsed: Parsed) -> None:
    plan = ctx.plan
    if parsed.has("no_ssh"):
        plan.node_rank = option_int(ctx, parsed, "node_rank", None)
        if not parsed.has("node_rank"):
            plan.warn("--no_ssh needs --node_rank", _span(parsed, "no_ssh"),
                      code="missing-value", severity="error")
    elif plan.nnodes == 1:
        plan.node_rank = 0
    elif plan.nnodes is not None:
        plan.warn(f"deepspeed starts all {plan.nnodes} nodes from here over {_backend(parsed)}",
                  _here(plan, parsed), severity="info", code="multi-node")


def _hosts_pool(
    plan: LaunchPlan, hosts: list[tuple[str, int | None]], word: Word | None
) -> dict[str, int | None]:
    plan.hosts = [h for h, _n in hosts]  # the nodes deepspeed spreads the job over
    pool: dict[str, int | None] = {}
    for host, slots in hosts:
        if slots is None:
            plan.warn(f"hostfile line for {host} has no slots=N", word.span if word else None,
                      code="bad-hostfile")
        pool[host] = slots
    return pool


def _include(pool: dict[str, int | None], spec: dict[str, list[int]]) -> dict[str, int | None]:
    out: dict[str, int | None] = {}
    for host, slots in pool.items():
        if host in spec:
            out[host] = len(spec[host]) if spec[host] else slots
    for host, items in spec.items():
        if host not in out and host not in pool:
            out[host] = len(items) if items else None
    return out


def _exclude(pool: dict[str, int | None], spec: dict[str, list[int]]) -> dict[str, int | None]:
    out: dict[str, int | None] = {}
    for host, slots in pool.items():
        if host not in spec:
            out[host] = slots
        elif spec[host]:
            left = None if slots is None else slots - len(spec[host])
            if left is None or left > 0:
                out[host] = left
    return out


def _unknown_pool(plan: LaunchPlan, parsed: Parsed, asked: _Asked) -> None:
    """The hostfile cannot be read: use what the command line says, no more."""
    span = _here(plan, parsed)
    num_nodes, num_gpus = asked.num_nodes, asked.num_gpus
    if isinstance(asked.include, dict):
        plan.nnodes = len(asked.include)
        counts: list[int | None] = [len(s) if s else None for s in asked.include.values()]
        if num_gpus is not None and num_gpus > 0:
            counts = [num_gpus] * len(counts)
        plan.nproc_per_node = uniform(counts)
    else:
        if num_nodes is not None and num_nodes > 0:
            plan.nnodes = num_nodes
        elif num_nodes is not None and not parsed.opaque:
            plan.warn("the number of nodes comes from the hostfile, which is not known", span)
        if num_gpus is not None and num_gpus > 0:
            plan.nproc_per_node = num_gpus
        elif num_gpus is not None and not parsed.opaque:
            plan.warn("the number of GPUs per node comes from the hostfile, which is not known",
                      span)
    if plan.nnodes is not None and isinstance(plan.nproc_per_node, int):
        plan.world_size = plan.nnodes * plan.nproc_per_node

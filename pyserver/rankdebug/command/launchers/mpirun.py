"""``mpirun``, ``mpiexec`` and ``orterun`` (Open MPI, MPICH/Hydra, Intel MPI).

The option table covers the options of Open MPI 4.1's orterun(1) that take values,
Open MPI 5's additions and Hydra's (``-ppn``, ``-hosts``, ``-f``, ``-genv VAR VAL``).
The implementations differ too much for a complete list, so unknown flags are not
reported and are read as taking no value.

Numbers: ``-np/-n/-c`` is the total; ``-N``, ``--npernode``, ``-ppn`` or ``--map-by
ppr:N:node`` the count per node; hosts come from ``-H h1:4,h2:4`` (``-hosts``) or a
hostfile read when it exists (``host slots=N`` or ``host:N``). With no host
information the job runs on this machine: one node of np processes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rankdebug import launcher_table
from rankdebug.command.launchers.base import Context
from rankdebug.command.launchers.common import (
    basename,
    hostfile_not_read,
    not_known,
    opaque_note,
    product,
    read_hostfile,
    read_int,
    uniform,
)
from rankdebug.command.launchers.inner import launch_inner
from rankdebug.command.launchers.wrappers import program_entry
from rankdebug.command.options import Opt, Parsed, Spec, flag, parse_options, value
from rankdebug.command.plan import LaunchPlan
from rankdebug.command.words import Span, Word

ROW = launcher_table.BY_NAME["mpirun"]
NAME = ROW.name


def _v(name: str, *flags: str, nargs: int = 1) -> Opt:
    return value(name, *flags, nargs=nargs)


OPTIONS: tuple[Opt, ...] = (
    value("np", "-np", "--np", "-n", "--n", "-c", help="Total number of processes."),
    value("npernode", "-N", "-npernode", "--npernode", help="Processes on each node."),
    value("ppn", "-ppn", "-perhost", help="Processes on each node (Hydra)."),
    flag("pernode", "-pernode", "--pernode", help="One process on each node."),
    value("host", "-H", "-host", "--host", help="Hosts: h1,h2 or h1:4,h2:4."),
    value("hosts", "-hosts", help="Hosts (Hydra): h1,h2 or h1:4,h2:4."),
    value("hostfile", "-hostfile", "--hostfile", "-machinefile", "--machinefile", "-f",
          "-default-hostfile", "--default-hostfile", help="Hostfile: `host slots=N` lines."),
    value("map_by", "--map-by", "-map-by", help="Mapping policy, e.g. ppr:4:node."),
    value("x", "-x", help="Export an environment variable (VAR or VAR=value) to the ranks."),
    _v("mca", "--mca", "-mca", nargs=2),
    _v("gmca", "--gmca", "-gmca", nargs=2),
    _v("pmixmca", "--pmixmca", "-pmixmca", nargs=2),
    _v("prtemca", "--prtemca", "-prtemca", nargs=2),
    _v("genv", "-genv", nargs=2),
    _v("env", "-env", nargs=2),
    *(
        _v(name.lstrip("-").replace("-", "_"), name, "-" + name.lstrip("-"))
        if name.startswith("--")
        else _v(name.lstrip("-").replace("-", "_"), name)
        for name in (
            "--npersocket", "--cpu-set", "--cpu-list", "--rank-by", "--bind-to",
            "--cpus-per-proc", "--cpus-per-rank", "--rankfile", "--output-filename",
            "--stdin", "--xml-file", "--xterm", "--path", "--prefix", "--preload-files",
            "--wdir", "--tune", "--debugger", "--timeout", "--app", "--cartofile",
            "--max-restarts", "--ompi-server", "--personality", "--ppr", "--report-events",
            "--report-pid", "--report-uri", "--launch-agent", "--max-vm-size", "--hnp",
            "--display", "--output", "--runtime-options", "--rank-file", "--pset",
            "--bind", "-rf", "-wd", "-am", "-cf", "-bootstrap", "-launcher", "-iface",
            "-binding", "-configfile", "-genvlist", "-envlist", "-gpus-per-proc",
        )
    ),
)  # fmt: skip

SPEC = Spec(NAME, OPTIONS, single_dash_long=True, complete=False)

_PPR = re.compile(r"^ppr:(\d+):node", re.IGNORECASE)


def matches(argv: Sequence[Word]) -> int | None:
    if argv and basename(argv[0]) in ROW.programs:
        return 1
    return None


def _hosts(text: str) -> list[tuple[str, int | None]]:
    """``h1:4,h2:4`` → slots 4 and 4; ``h1,h1,h2`` → 2 and 1 (each listing is one slot)."""
    counts: dict[str, int] = {}
    for raw in text.split(","):
        item = raw.strip()
        if not item:
            continue
        host, sep, n = item.rpartition(":")
        if sep and n.isdigit():
            counts[host] = counts.get(host, 0) + int(n)
        else:
            counts[item] = counts.get(item, 0) + 1
    return [(h, n) for h, n in counts.items()]


def parse(ctx: Context, start: int) -> None:
    plan = ctx.plan
    parsed = parse_options(plan, plan.argv, start, SPEC)
    exported: dict[str, Word] = {}
    for use in parsed.all("x"):
        word = use.value
        if word is not None and "=" in word.known_prefix:
            key = word.known_prefix.split("=", 1)[0]
            exported[key] = word.suffix_after(len(key) + 1)
    for use in parsed.all("genv") + parsed.all("env"):
        if len(use.values) == 2 and use.values[0].value:
            exported[use.values[0].value or ""] = use.values[1]
    if launch_inner(ctx, parsed.end, NAME, exported):
        return
    _numbers(ctx, parsed)
    program_entry(ctx, parsed.end)


def _per_node(plan: LaunchPlan, parsed: Parsed) -> tuple[int | None, bool]:
    """Processes per node and whether the command says so."""
    use = parsed.get("npernode") or parsed.get("ppn")
    if use is not None and use.value is not None:
        return read_int(plan, use.value, use.flag), True
    if parsed.has("pernode"):
        return 1, True
    for name, prefix in (("map_by", ""), ("ppr", "ppr:")):
        use = parsed.get(name)
        if use is None or use.value is None:
            continue
        word = use.value
        if word.value is None:
            not_known(plan, use.flag, word)
            return None, True
        m = _PPR.match(prefix + word.value)
        if m:
            return int(m.group(1)), True
    return None, False


@dataclass
class _Counts:
    """Processes in all (-np), per node and nodes, as far as they are known."""

    total: int | None
    per_node: int | None
    nnodes: int | None = None
    np_given: bool = False
    per_given: bool = False


def _numbers(ctx: Context, parsed: Parsed) -> None:
    plan = ctx.plan
    here = plan.argv[parsed.start - 1].span
    np_use = parsed.get("np")
    total: int | None = None
    if np_use is not None and np_use.value is not None:
        total = read_int(plan, np_use.value, np_use.flag)
    per_node, per_given = _per_node(plan, parsed)
    counts = _Counts(total, per_node, None, np_use is not None, per_given)
    hosts, hosts_readable = _host_info(ctx, parsed)
    if hosts:
        plan.hosts = [h for h, _n in hosts]

    if parsed.opaque and np_use is None and not per_given and hosts is None:
        plan.warn(f"-np is not given, and {opaque_note(parsed)} may set it",
                  parsed.opaque[0].span)
        return
    if hosts is None and hosts_readable:
        _this_machine(plan, counts, here)
    elif hosts is None:
        if counts.per_node and counts.total is not None and counts.total % counts.per_node == 0:
            counts.nnodes = counts.total // counts.per_node
    else:
        _over_hosts(plan, counts, hosts, here)
    if counts.total is None and not counts.np_given:
        counts.total = product(counts.per_node, counts.nnodes)
    plan.world_size = counts.total
    plan.nproc_per_node = counts.per_node
    plan.nnodes = counts.nnodes
    if counts.nnodes == 1:
        plan.node_rank = 0
    elif counts.nnodes is not None:
        plan.warn(f"mpirun starts all {counts.nnodes} nodes from here", here, severity="info",
                  code="multi-node")


def _this_machine(plan: LaunchPlan, c: _Counts, here: Span) -> None:
    """No host information: this machine (or the allocation it runs in)."""
    if c.per_given and c.np_given:
        if c.per_node and c.total is not None:
            if c.total % c.per_node == 0:
                c.nnodes = c.total // c.per_node
            else:
                plan.warn(f"-np {c.total} is not a multiple of {c.per_node} per node", here,
                          code="uneven")
    elif c.per_given:
        c.nnodes, c.total = 1, c.per_node
    else:
        c.nnodes, c.per_node = 1, c.total
        if not c.np_given:
            plan.warn("without -np mpirun starts one process per CPU core, and the core "
                      "count is not known", here)


def _over_hosts(plan: LaunchPlan, c: _Counts, hosts: list[tuple[str, int | None]],
                here: Span) -> None:
    """Hosts and their slots are known: -np, or the slots, spread over them."""
    c.nnodes = len(hosts)
    slots = [n for _h, n in hosts]
    if c.per_given:
        if not c.np_given:
            c.total = None if c.per_node is None else c.per_node * c.nnodes
        elif c.per_node and c.total is not None and c.total % c.per_node == 0:
            c.nnodes = min(c.nnodes, c.total // c.per_node)
    elif not c.np_given:
        c.total = sum(n or 0 for n in slots)
        c.per_node = uniform(slots)
    elif c.total is not None:
        even = uniform(slots)
        if even is not None and c.total == even * c.nnodes:
            c.per_node = even
        else:
            plan.warn(f"how mpirun spreads {c.total} processes over {c.nnodes} hosts with "
                      f"{'/'.join(str(n) for n in slots)} slots is not even", here,
                      code="uneven")


def _host_info(
    ctx: Context, parsed: Parsed
) -> tuple[list[tuple[str, int | None]] | None, bool]:
    """Hosts and slots; and False when hosts were given but cannot be known."""
    plan: LaunchPlan = ctx.plan
    host_use = parsed.get("host") or parsed.get("hosts")
    if host_use is not None and host_use.value is not None:
        word = host_use.value
        if word.value is None:
            not_known(plan, host_use.flag, word)
            return None, False
        return _hosts(word.value), True
    file_use = parsed.get("hostfile")
    if file_use is not None and file_use.value is not None:
        hosts = read_hostfile(ctx, file_use.value)
        if hosts is None:
            hostfile_not_read(plan, file_use.flag, file_use.value)
            return None, False
        merged: dict[str, int | None] = {}
        for host, slots in hosts:
            if host in merged:
                prev = merged[host]
                merged[host] = None if prev is None or slots is None else prev + slots
            else:
                merged[host] = slots
        return list(merged.items()), True
    return None, True

"""Horovod's ``horovodrun`` and ``python -m horovod.runner.launch``.

Options are horovod/runner/launch.py's ``parse_args()`` (argparse with abbreviations;
``-np``, ``-cb``, ``-hostfile`` and ``-prefix-timestamp`` are long options with one dash).
``-np`` is the number of processes. Hosts come from ``-H host1:4,host2:4`` or
``-hostfile FILE`` (``host slots=N`` lines), else ``localhost:NP``; processes fill each
host's slots in order (``hosts.get_host_assignments``, and Open MPI's ``--map-by slot``).
With ``--min-np`` or ``--host-discovery-script`` the run is elastic and sizes itself at run
time. Horovod starts every host from here, over ssh.
"""

from __future__ import annotations

from collections.abc import Sequence

from rankdebug import launcher_table
from rankdebug.command.launchers.base import Context
from rankdebug.command.launchers.common import (
    hostfile_not_read,
    not_known,
    program_or_module,
    read_hostfile,
    read_int,
    uniform,
)
from rankdebug.command.launchers.wrappers import program_entry
from rankdebug.command.options import Opt, Parsed, Spec, flag, parse_options, value
from rankdebug.command.plan import LaunchPlan
from rankdebug.command.words import Span, Word

ROW = launcher_table.BY_NAME["horovodrun"]
NAME = ROW.name

_VALUES = (
    "--start-timeout", "--network-interfaces", "--network-interface", "--output-filename",
    "--config-file", "--fusion-threshold-mb", "--cycle-time-ms", "--cache-capacity",
    "--autotune-log-file", "--autotune-warmup-samples", "--autotune-steps-per-sample",
    "--autotune-bayes-opt-max-samples", "--autotune-gaussian-process-noise",
    "--slots-per-host", "--elastic-timeout", "--reset-limit", "--timeline-filename",
    "--stall-check-warning-time-seconds", "--stall-check-shutdown-time-seconds", "--mpi-args",
    "--binding-args", "--num-nccl-streams", "--thread-affinity", "--gloo-timeout-seconds",
    "--log-level",
)  # fmt: skip
_FLAGS = (
    "--disable-cache", "--verbose", "--hierarchical-allreduce", "--no-hierarchical-allreduce",
    "--hierarchical-allgather", "--no-hierarchical-allgather", "--torus-allreduce",
    "--no-torus-allreduce", "--autotune", "--no-autotune", "--timeline-mark-cycles",
    "--no-timeline-mark-cycles", "--no-stall-check", "--stall-check", "--mpi-threads-disable",
    "--no-mpi-threads-disable", "--tcp", "--log-with-timestamp", "--log-without-timestamp",
    "--log-hide-timestamp", "--no-log-hide-timestamp", "--gloo", "--mpi", "--jsrun",
)  # fmt: skip

OPTIONS: tuple[Opt, ...] = (
    value("num_proc", "-np", "--num-proc", help="Total number of processes."),
    value("hosts", "-H", "--hosts", help="Hosts and their slots: host1:4,host2:4."),
    value("hostfile", "-hostfile", "--hostfile", help="Hostfile: `host slots=N` lines."),
    value("host_discovery_script", "--host-discovery-script",
          help="Script printing the hosts (elastic training)."),
    value("min_np", "--min-np", "--min-num-proc", help="Fewest processes (elastic training)."),
    value("max_np", "--max-np", "--max-num-proc", help="Most processes (elastic training)."),
    value("ssh_port", "-p", "--ssh-port", help="SSH port on every host."),
    value("ssh_identity_file", "-i", "--ssh-identity-file", help="SSH private key."),
    value("blacklist_cooldown_range", "--blacklist-cooldown-range", nargs=2),
    flag("version", "-v", "--version"),
    flag("check_build", "-cb", "--check-build", help="Show what Horovod was built with."),
    flag("prefix_timestamp", "-prefix-timestamp", "--prefix-output-with-timestamp"),
    *(value(f.lstrip("-").replace("-", "_"), f) for f in _VALUES),
    *(flag(f.lstrip("-").replace("-", "_"), f) for f in _FLAGS),
)

SPEC = Spec(NAME, OPTIONS, abbrev=True, single_dash_long=True, argparse=True)


def matches(argv: Sequence[Word]) -> int | None:
    return program_or_module(argv, ROW)


def parse(ctx: Context, start: int) -> None:
    plan = ctx.plan
    parsed = parse_options(plan, plan.argv, start, SPEC)
    here = plan.argv[start - 1].span
    program_entry(ctx, parsed.end)
    if parsed.has("check_build") or parsed.has("version"):
        plan.warn("horovodrun only prints what it was built with; it starts no process",
                  here, severity="info", code="no-launch")
        plan.nnodes = plan.node_rank = plan.nproc_per_node = plan.world_size = None
        return
    np_use = parsed.get("num_proc")
    total = read_int(plan, np_use.value, np_use.flag) if np_use and np_use.value else None
    if np_use is None and not parsed.opaque:
        plan.warn("horovodrun needs -np, the number of processes", here,
                  code="missing-value", severity="error")
    if parsed.has("min_np") or parsed.has("host_discovery_script"):
        plan.warn("an elastic horovodrun run decides its processes and hosts at run time",
                  here, code="elastic")
        return
    hosts = _hosts(ctx, parsed, here)
    if hosts is None or total is None:
        return
    _assign(plan, hosts, total, here)


def _hosts(ctx: Context, parsed: Parsed, here: Span) -> list[tuple[str, int | None]] | None:
    """The hosts and their slots; None when not known (said why)."""
    plan = ctx.plan
    use = parsed.get("hosts")
    if use is not None and use.value is not None:
        word = use.value
        if word.value is None:
            not_known(plan, use.flag, word)
            return None
        hosts: list[tuple[str, int | None]] = []
        for item in word.value.split(","):
            host, sep, slots = item.strip().rpartition(":")
            if not sep or not host or not slots.isdigit():
                plan.warn(f"{use.flag} {word.value!r}: horovodrun needs host:slots for each "
                          "host", word.span, code="bad-value", severity="error")
                return None
            hosts.append((host, int(slots)))
        return hosts
    use = parsed.get("hostfile")
    if use is not None and use.value is not None:
        found = read_hostfile(ctx, use.value)
        if found is None:
            hostfile_not_read(plan, use.flag, use.value)
        return found
    if parsed.opaque:
        return None
    return [("localhost", None)]  # localhost:NP


def _assign(plan: LaunchPlan, hosts: list[tuple[str, int | None]], total: int,
            here: Span) -> None:
    """Processes fill the hosts' slots in order."""
    counts: list[int] = []
    left = total
    for host, slots in hosts:
        if left <= 0:
            break
        if slots is None and host != "localhost":
            plan.warn(f"the hostfile gives no slots=N for {host}", here, code="bad-hostfile")
            return
        take = left if slots is None else min(slots, left)
        counts.append(take)
        left -= take
    if left > 0:
        plan.warn(f"-np {total} is more than the {total - left} slots of the hosts given",
                  here, code="conflict", severity="error")
        return
    plan.world_size = total
    plan.nnodes = len(counts)
    plan.nproc_per_node = uniform(counts)
    if plan.nnodes == 1:
        plan.node_rank = 0
    else:
        plan.warn(f"horovodrun starts all {plan.nnodes} hosts from here, over ssh", here,
                  severity="info", code="multi-node")

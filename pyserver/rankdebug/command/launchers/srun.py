"""Slurm's ``srun``.

Options are srun(1)'s (Slurm 22.05, plus options added since): getopt_long, so long
options may be abbreviated, short ones clustered or attached (``-N2 -n8``), and
options marked optional take a value only with ``=``. ``#SBATCH`` directives
(``ctx.sbatch_args``) and the SLURM_* variables srun reads are defaults the command
line overrides.

Numbers: ``-n/--ntasks`` is the total; ``--ntasks-per-node`` the count per node (or
``--ntasks-per-gpu`` times ``--gpus-per-node``/``--gres=gpu:N``); ``-N/--nodes`` the
nodes (``MIN-MAX`` is a range). With only ``-N`` srun starts one task per node, whatever
GPUs the nodes have (said when they have more than one); with nothing at all, one task.

When srun runs a launcher that starts ranks itself (``srun torchrun ...``) the plan
is that launcher's, with an info diagnostic.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rankdebug import launcher_table
from rankdebug.command.hostlist import expand_hostlist
from rankdebug.command.launchers import lightning
from rankdebug.command.launchers.base import Context
from rankdebug.command.launchers.common import Setting, basename, not_known, opaque_note, read_int
from rankdebug.command.launchers.inner import launch_inner
from rankdebug.command.launchers.python import script_facts
from rankdebug.command.launchers.wrappers import program_entry
from rankdebug.command.options import (
    Opt,
    Parsed,
    Spec,
    flag,
    optional,
    parse_options,
    value,
)
from rankdebug.command.plan import LaunchPlan, known_int
from rankdebug.command.words import Span, Word

ROW = launcher_table.BY_NAME["srun"]
NAME = ROW.name

_VALUES = (
    "accel-bind", "acctg-freq", "bb", "bbf", "bcast-exclude", "cluster-constraint", "comment",
    "container", "container-id", "cores-per-socket", "cpu-bind", "cpu-freq", "cpus-per-gpu",
    "deadline", "delay-boot", "epilog", "export", "gid", "gpu-bind", "gpu-freq",
    "gpus-per-node", "gpus-per-socket", "gpus-per-task", "gres-flags", "gres", "het-group",
    "pack-group", "hint", "jobid", "mail-type", "mail-user", "mcs-label", "mem-bind",
    "mem-per-cpu", "mem-per-gpu", "mem", "mincpus", "mpi", "msg-timeout", "network",
    "ntasks-per-core", "ntasks-per-gpu", "ntasks-per-node", "ntasks-per-socket", "open-mode",
    "power", "prefer", "priority", "profile", "prolog", "reservation", "signal",
    "slurmd-debug", "sockets-per-node", "switches", "task-epilog", "task-prolog",
    "thread-spec", "threads-per-core", "time-min", "tmp", "uid", "wckey", "tres-per-task",
    "tres-bind", "segment", "cpu_bind", "mem_bind",
)  # fmt: skip
_OPTIONAL = (
    "bcast", "compress", "exclusive", "nice", "propagate", "resv-ports", "send-libs", "x11",
    "oom-kill-step",
)  # fmt: skip
_FLAGS = (
    "contiguous", "exact", "multi-prog", "overlap", "pty", "quit-on-interrupt", "reboot",
    "spread-job", "test-only", "usage", "use-min-nodes", "external-launcher",
)  # fmt: skip
_SHORT_VALUES = {
    "A": "account", "B": "extra-node-info", "C": "constraint", "D": "chdir", "F": "nodefile",
    "G": "gpus", "J": "job-name", "L": "licenses", "M": "clusters", "N": "nodes",
    "S": "core-spec", "T": "threads", "b": "begin", "c": "cpus-per-task", "d": "dependency",
    "e": "error", "i": "input", "m": "distribution", "n": "ntasks", "o": "output",
    "p": "partition", "q": "qos", "r": "relative", "t": "time", "w": "nodelist",
    "x": "exclude",
}  # fmt: skip
_SHORT_OPTIONAL = {"I": "immediate", "K": "kill-on-bad-exit", "k": "no-kill"}
_SHORT_FLAGS = {
    "E": "preserve-env", "H": "hold", "O": "overcommit", "Q": "quiet", "V": "version",
    "X": "disable-status", "Z": "no-allocate", "h": "help", "l": "label",
    "s": "oversubscribe", "u": "unbuffered", "v": "verbose",
}  # fmt: skip
_HELP = {
    "ntasks": "Total number of tasks (processes).",
    "ntasks-per-node": "Tasks on each node.",
    "nodes": "Number of nodes, or MIN-MAX.",
    "gpus-per-node": "GPUs on each node.",
    "cpus-per-task": "CPUs for each task.",
    "gpus": "GPUs for the whole job.",
    "gres": "Generic resources, e.g. gpu:8.",
}


def _name(long: str) -> str:
    return long.replace("-", "_")


def _options(wait_takes_value: bool) -> list[Opt]:
    opts: list[Opt] = []
    for long in _VALUES:
        opts.append(value(_name(long), "--" + long, help=_HELP.get(long, "")))
    for long in _OPTIONAL:
        opts.append(optional(_name(long), "--" + long))
    for long in _FLAGS:
        opts.append(flag(_name(long), "--" + long))
    for short, long in _SHORT_VALUES.items():
        opts.append(value(_name(long), "-" + short, "--" + long, help=_HELP.get(long, "")))
    for short, long in _SHORT_OPTIONAL.items():
        opts.append(optional(_name(long), "-" + short, "--" + long))
    for short, long in _SHORT_FLAGS.items():
        opts.append(flag(_name(long), "-" + short, "--" + long))
    if wait_takes_value:
        opts.append(value("wait", "-W", "--wait"))
    else:
        opts.append(flag("wait", "-W", "--wait"))
    return opts


SPEC = Spec(NAME, _options(True), abbrev=True, unknown_severity="warning")

# `#SBATCH` directives: sbatch's options (its -W takes no value).
SBATCH_SPEC = Spec(
    "sbatch",
    [
        *_options(False),
        value("array", "-a", "--array"),
        value("wrap", "--wrap"),
        value("export_file", "--export-file"),
        optional("get_user_env", "--get-user-env"),
        flag("batch", "--batch"),
        flag("ignore_pbs", "--ignore-pbs"),
        optional("kill_on_invalid_dep", "--kill-on-invalid-dep"),
        flag("no_requeue", "--no-requeue"),
        flag("requeue", "--requeue"),
        flag("parsable", "--parsable"),
        flag("wait_all_nodes", "--wait-all-nodes"),
        flag("stepmgr", "--stepmgr"),
    ],
    abbrev=True,
    complete=False,
)


def matches(argv: Sequence[Word]) -> int | None:
    if argv and basename(argv[0]) in ROW.programs:
        return 1
    return None


def parse(ctx: Context, start: int) -> None:
    plan = ctx.plan
    parsed = parse_options(plan, plan.argv, start, SPEC)
    if launch_inner(ctx, parsed.end, NAME, _task_vars(plan.argv[start - 1].span)):
        return
    _numbers(ctx, parsed, plan.argv[start - 1].span)
    program_entry(ctx, parsed.end)
    _lightning(ctx, parsed)


def _lightning(ctx: Context, parsed: Parsed) -> None:
    """A Lightning script as the tasks' program: its Trainer's numbers against Slurm's."""
    entry = ctx.plan.entry
    if entry is None or entry.kind != "script" or entry.target.value is None:
        return
    facts = script_facts(ctx, entry.target.value)
    if facts is not None and facts[3] is not None:
        name = parsed.word("job_name")
        lightning.check_slurm(ctx, facts[3], entry.target,
                              name.value if name is not None else None)


def _task_vars(span: Span) -> dict[str, Word]:
    """What srun sets in each task's environment, differently for each (so unknown here):
    shell code it runs (`srun bash -c '... $SLURM_PROCID'`) reads them."""
    return {name: Word.unknown(f"${name}", span, f"srun sets ${name} for each task")
            for name in ("SLURM_PROCID", "SLURM_LOCALID", "SLURM_NODEID")}


def _lookup(
    ctx: Context, parsed: Parsed, sbatch: Parsed | None, name: str, env: Sequence[str]
) -> Setting | None:
    """An option of the command line, else a SLURM_* variable, else an #SBATCH directive."""
    use = parsed.get(name)
    if use is not None:
        return Setting(use.value, use.flag)
    for var in env:
        word = ctx.env.get(var)
        if word is not None:
            return Setting(word, var)
    if sbatch is not None:
        use = sbatch.get(name)
        if use is not None:
            return Setting(use.value, f"#SBATCH {use.flag}")
    return None


def _int(plan: LaunchPlan, found: Setting | None) -> int | None:
    if found is None or found.word is None:
        return None
    return read_int(plan, found.word, found.label)


def _nodes(plan: LaunchPlan, found: Setting | None) -> int | None:
    """-N as an int; a MIN-MAX range sets plan.nnodes_range instead."""
    if found is None or found.word is None:
        return None
    word = found.word
    text = word.value
    if text is None:
        not_known(plan, found.label, word)
        return None
    low, sep, high = text.strip().partition("-")
    if not sep:
        return read_int(plan, word, found.label)
    if low.isdigit() and high.isdigit():
        if int(low) == int(high):
            return int(low)
        plan.nnodes_range = (int(low), int(high))
        plan.warn(f"{found.label} {text} lets Slurm choose between {low} and {high} nodes, so "
                  "the number of tasks is decided at run time", word.span)
        return None
    plan.warn(f"{found.label} is {text!r}, which is neither N nor MIN-MAX", word.span,
              code="bad-value")
    return None


@dataclass(frozen=True)
class _Asked:
    """-N, -n and --ntasks-per-node as far as they are known, and where -n came from."""

    nodes: int | None
    tasks: int | None
    per: int | None
    tasks_label: str


def _numbers(ctx: Context, parsed: Parsed, here: Span) -> None:
    plan = ctx.plan
    sbatch = (
        parse_options(plan, list(ctx.sbatch_args), 0, SBATCH_SPEC, quiet=True)
        if ctx.sbatch_args
        else None
    )
    nodes_v = _lookup(ctx, parsed, sbatch, "nodes", ("SLURM_NNODES", "SLURM_JOB_NUM_NODES"))
    tasks_v = _lookup(ctx, parsed, sbatch, "ntasks", ("SLURM_NTASKS", "SLURM_NPROCS"))
    per_v = _lookup(ctx, parsed, sbatch, "ntasks_per_node", ("SLURM_NTASKS_PER_NODE",))
    nodelist = _lookup(ctx, parsed, sbatch, "nodelist", ("SLURM_JOB_NODELIST", "SLURM_NODELIST"))
    if nodelist is not None and nodelist.word is not None and nodelist.word.value:
        plan.hosts = expand_hostlist(nodelist.word.value)
    gpus = _gpus_per_node(ctx, parsed, sbatch)
    if per_v is None:
        per_v = _per_gpu(ctx, parsed, sbatch, gpus)
    asked = _Asked(_nodes(plan, nodes_v), _int(plan, tasks_v), _int(plan, per_v),
                   tasks_v.label if tasks_v else "-n")
    unknown = [v for v in (nodes_v, tasks_v, per_v) if v is not None and (
        v.word is None or v.word.value is None)]
    if parsed.opaque and not (nodes_v or tasks_v or per_v):
        plan.warn(f"the task count is not given, and {opaque_note(parsed)} may set it",
                  parsed.opaque[0].span)
        return
    if unknown or plan.nnodes_range is not None:
        _known_part(plan, asked)
    elif asked.tasks is not None:
        _tasks(plan, asked, asked.tasks, here)
    elif asked.per is not None:
        plan.nnodes = asked.nodes if asked.nodes is not None else 1
        plan.nproc_per_node = asked.per
        plan.world_size = plan.nnodes * asked.per
    elif asked.nodes is not None:
        plan.nnodes, plan.nproc_per_node, plan.world_size = asked.nodes, 1, asked.nodes
    else:
        plan.nnodes, plan.nproc_per_node, plan.world_size = 1, 1, 1
    if per_v is None and tasks_v is None and plan.nproc_per_node == 1 and gpus and gpus > 1:
        plan.warn(f"srun starts one task on each node, which has {gpus} GPUs; "
                  f"--ntasks-per-node={gpus} (or --ntasks-per-gpu=1) starts one per GPU",
                  here, severity="info", code="one-task-per-node")
    _node_rank(plan, here)


_GRES_GPUS = re.compile(r"(?:^|,)gpu(?::[\w.-]+)?:(\d+)(?:,|$)")


def _gpus_per_node(ctx: Context, parsed: Parsed, sbatch: Parsed | None) -> int | None:
    """GPUs on each node of the step: --gpus-per-node [TYPE:]N, else --gres gpu[:TYPE]:N."""
    found = _lookup(ctx, parsed, sbatch, "gpus_per_node", ("SLURM_GPUS_PER_NODE",))
    text = found.word.value if found is not None and found.word is not None else None
    if text is not None:
        count = text.rsplit(":", 1)[-1]
        return int(count) if count.isdigit() else None
    found = _lookup(ctx, parsed, sbatch, "gres", ())
    text = found.word.value if found is not None and found.word is not None else None
    m = _GRES_GPUS.search(text) if text is not None else None
    return int(m.group(1)) if m else None


def _per_gpu(ctx: Context, parsed: Parsed, sbatch: Parsed | None,
             gpus: int | None) -> Setting | None:
    """--ntasks-per-gpu N with the GPUs per node known: N tasks for each of them."""
    found = _lookup(ctx, parsed, sbatch, "ntasks_per_gpu", ("SLURM_NTASKS_PER_GPU",))
    if found is None or found.word is None:
        return None
    n = known_int(found.word)
    if n is None or gpus is None:
        why = "the GPUs per node are not known" if n is not None else "it is not known"
        return Setting(Word.unknown(f"{found.word.display} per GPU", found.word.span,
                                    f"{found.label} gives tasks per GPU, and {why}"),
                       "the tasks per node")
    return Setting(Word.literal(str(n * gpus), found.word.span),
                   f"{found.label} with {gpus} GPUs per node")


def _known_part(plan: LaunchPlan, asked: _Asked) -> None:
    """Some numbers are not known: keep what can be known (the rest was warned about)."""
    nodes, tasks, per = asked.nodes, asked.tasks, asked.per
    if tasks is not None:
        plan.world_size = tasks
    if per is not None:
        plan.nproc_per_node = per
    if nodes is not None:
        plan.nnodes = nodes
    if plan.world_size is None and nodes is not None and per is not None:
        plan.world_size = nodes * per


def _tasks(plan: LaunchPlan, asked: _Asked, tasks: int, here: Span) -> None:
    """-n TASKS given: how they spread over the nodes."""
    nodes, per = asked.nodes, asked.per
    plan.world_size = tasks
    if nodes is not None and per is not None and per * nodes != tasks:
        # srun's own check (libsrun/opt.c): "can't honor --ntasks-per-node ... Ignoring
        # --ntasks-per-node", the count the job's #SBATCH line handed down included.
        plan.warn(f"srun ignores --ntasks-per-node={per}: {tasks} tasks are not {per} on each "
                  f"of {nodes} nodes", here, severity="info", code="ntasks-per-node-ignored")
        per = None
    if nodes is not None:
        plan.nnodes = nodes
        if nodes > 0 and tasks % nodes == 0:
            plan.nproc_per_node = per if per is not None else tasks // nodes
        elif per is not None:
            plan.nproc_per_node = None
            plan.warn(f"{tasks} tasks do not fill {nodes} nodes of {per}", here,
                      code="uneven")
        else:
            plan.warn(f"{tasks} tasks are not spread evenly over {nodes} nodes", here,
                      code="uneven")
    elif per is not None:
        plan.nproc_per_node = per
        if per > 0 and tasks % per == 0:
            plan.nnodes = tasks // per
    elif tasks == 1:
        plan.nnodes, plan.nproc_per_node = 1, 1
    else:
        plan.warn(f"{asked.tasks_label} {tasks} without -N or "
                  "--ntasks-per-node: Slurm decides how many nodes hold them", here)


def _node_rank(plan: LaunchPlan, here: Span) -> None:
    if plan.nnodes == 1:
        plan.node_rank = 0
    elif plan.nnodes is not None:
        plan.warn(f"srun starts tasks on all {plan.nnodes} nodes from here", here,
                  severity="info", code="multi-node")

"""MindSpore's ``msrun`` and ``python -m mindspore.parallel.cluster.run``.

Options are mindspore/parallel/cluster/run.py's ``get_args()`` (argparse with
abbreviations). ``--worker_num`` is the total number of processes (default 8) and
``--local_worker_num`` the number on this node (default 8). Without ``--node_rank``
(default -1) a multi-node job's ranks are assigned by the scheduler (node_rank None);
when the node count itself is not known, node_rank stays at the default 0.
"""

from __future__ import annotations

from collections.abc import Sequence

from rankdebug import launcher_table
from rankdebug.command.launchers.base import Context
from rankdebug.command.launchers.common import (
    is_python,
    launcher_entry,
    option_int,
    program_or_module,
)
from rankdebug.command.launchers.wrappers import program_entry
from rankdebug.command.options import Opt, Spec, parse_options, value
from rankdebug.command.words import Word

ROW = launcher_table.BY_NAME["msrun"]
NAME = ROW.name

OPTIONS: tuple[Opt, ...] = (
    value("worker_num", "--worker_num", help="Total number of processes (default 8)."),
    value("local_worker_num", "--local_worker_num", help="Processes on this node (default 8)."),
    value("master_addr", "--master_addr", help="Address of the scheduler."),
    value("master_port", "--master_port", help="Port of the scheduler (default 8118)."),
    value("node_rank", "--node_rank", help="Rank of this node; -1 lets MindSpore assign it."),
    value("log_dir", "--log_dir", help="Directory for the logs."),
    value("join", "--join", help="True: wait for the processes and report their results."),
    value("cluster_time_out", "--cluster_time_out", help="Seconds to wait for the cluster."),
    value("bind_core", "--bind_core", help="Bind CPU cores: True, False or a JSON mapping."),
    value("sim_level", "--sim_level", help="Simulation level: one process only."),
    value("sim_rank_id", "--sim_rank_id", help="Rank of the simulated process."),
    value("rank_table_file", "--rank_table_file", help="Rank table file."),
    value("worker_log_name", "--worker_log_name", help="Worker log file name."),
    value("tail_worker_log", "--tail_worker_log", help="Which worker logs to tail."),
)

SPEC = Spec(NAME, OPTIONS, abbrev=True, argparse=True)


def matches(argv: Sequence[Word]) -> int | None:
    return program_or_module(argv, ROW)


def parse(ctx: Context, start: int) -> None:
    plan = ctx.plan
    parsed = parse_options(plan, plan.argv, start, SPEC)
    here = plan.argv[start - 1].span
    total = option_int(ctx, parsed, "worker_num", 8)
    local = option_int(ctx, parsed, "local_worker_num", 8)
    plan.world_size = total
    plan.nproc_per_node = local
    if total is not None and local is not None:
        if local > total:
            plan.warn(f"--local_worker_num {local} is more than --worker_num {total}", here,
                      code="conflict", severity="error")
        elif local > 0 and total % local == 0:
            plan.nnodes = total // local
        else:
            plan.warn(f"--worker_num {total} is not a multiple of --local_worker_num {local}",
                      here, code="uneven")
    rank = option_int(ctx, parsed, "node_rank", -1)
    if plan.nnodes == 1:
        plan.node_rank = 0
    elif rank is not None and rank >= 0:
        plan.node_rank = rank
    elif rank == -1 and plan.nnodes is None:
        plan.node_rank = 0  # node count not known: the default is node 0, as for torchrun
    elif rank == -1:
        plan.warn("without --node_rank MindSpore assigns this node's rank when the cluster "
                  "forms", here, severity="info", code="rendezvous")
    sim = parsed.word("sim_level")
    if sim is not None and sim.value not in (None, "-1"):
        plan.warn("with --sim_level msrun starts a single simulated process",
                  sim.span, severity="info", code="simulation")
    plan.master_addr = parsed.word("master_addr")
    plan.master_port = parsed.word("master_port")
    target = plan.argv[parsed.end] if parsed.end < len(plan.argv) else None
    if target is not None and is_python(target):
        # `msrun ... python x.py`: msrun runs the program given, here python with x.py.
        program_entry(ctx, parsed.end)
        return
    py = target is not None and (target.display.endswith(".py") or target.value is None)
    launcher_entry(plan, parsed, NAME, "script" if py else "cli")

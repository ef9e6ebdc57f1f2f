"""Scripts that start their own workers from a flag: ``python tools/train_net.py --num-gpus 8
--config-file cfg.yaml`` (detectron2 and the projects built on it: its
``default_argument_parser()`` and ``launch()``).

detectron2/engine/defaults.py (facebookresearch/detectron2, ``default_argument_parser``;
argparse, abbreviations allowed): ``--num-gpus`` (processes per machine, default 1),
``--num-machines`` (1), ``--machine-rank`` (0), ``--dist-url`` (``tcp://127.0.0.1:PORT``),
``--config-file``, ``--resume``, ``--eval-only``, then the config overrides (REMAINDER: an
option after the first override is an override). detectron2/engine/launch.py: with a world
(``num_gpus × num_machines``) of 1 the main function runs in the script's own process;
otherwise ``torch.multiprocessing.start_processes`` starts ``num_gpus`` workers on this
machine, each given its local rank as an argument and calling ``init_process_group`` with
``rank = machine_rank × num_gpus + local_rank``: no rank variable in their environment.

:mod:`rankdebug.command.launchers.python` hands a script here when its source uses
``default_argument_parser`` and calls ``launch(`` (it cannot be told from the command).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rankdebug import launcher_table
from rankdebug.command.launchers.base import Context
from rankdebug.command.launchers.common import endpoint, option_int, single_process
from rankdebug.command.options import Opt, Spec, flag, parse_options, value
from rankdebug.command.plan import LaunchPlan
from rankdebug.command.words import Span, Word

ROW = launcher_table.BY_NAME["detectron2"]
NAME = ROW.name

OPTIONS: tuple[Opt, ...] = (
    value("config_file", "--config-file", help="Path to the config file."),
    flag("resume", "--resume", help="Resume from the last checkpoint of the output folder."),
    flag("eval_only", "--eval-only", help="Evaluate only."),
    value("num_gpus", "--num-gpus", help="Processes per machine (default 1)."),
    value("num_machines", "--num-machines", help="Number of machines (default 1)."),
    value("machine_rank", "--machine-rank", help="Rank of this machine (default 0)."),
    value("dist_url", "--dist-url", help="init_process_group's URL (tcp://host:port)."),
)
# Scripts add options of their own: those are not reported.
SPEC = Spec("detectron2's parser", OPTIONS, abbrev=True, complete=False, argparse=True)

# The source of a script built on detectron2's parser and launch().
_PARSER = re.compile(r"\bdefault_argument_parser\b")
_LAUNCH = re.compile(r"(?<![\w.])launch\(|\.launch\(")


def matches(argv: Sequence[Word]) -> int | None:
    return None  # told from the script's source: see python.py


def spawns_from_flag(source: str) -> bool:
    """The script parses detectron2's arguments and starts its workers with ``launch()``."""
    return bool(_PARSER.search(source) and _LAUNCH.search(source))


def parse(ctx: Context, start: int) -> None:
    """The script's arguments from ``argv[start:]`` (after the script itself)."""
    plan = ctx.plan
    argv = plan.argv
    here = argv[start - 1].span
    plan.launcher = NAME
    parsed = parse_options(plan, argv, start, SPEC)
    gpus = option_int(ctx, parsed, "num_gpus", 1)
    machines = option_int(ctx, parsed, "num_machines", 1)
    rank = option_int(ctx, parsed, "machine_rank", 0)
    url = parsed.word("dist_url")
    if url is not None and url.value is not None and url.value.startswith("tcp://"):
        endpoint(plan, url.suffix_after(len("tcp://")))
    if gpus is None or machines is None:
        plan.nproc_per_node, plan.nnodes, plan.node_rank = gpus, machines, rank
        return
    if gpus * machines == 1:
        single_process(plan)
        plan.in_launcher = True  # launch() calls the main function in this process
        return
    plan.nproc_per_node, plan.nnodes, plan.node_rank = gpus, machines, rank
    plan.world_size = gpus * machines
    _spawned(plan, here, gpus)


def _spawned(plan: LaunchPlan, here: Span, gpus: int) -> None:
    plan.warn(f"the script's launch() starts {gpus} worker processes here with "
              "torch.multiprocessing, each given its rank as an argument, not in its "
              "environment, so rankdebug cannot pick a rank out to debug; --num-gpus 1 (with "
              "one machine) runs the work in the script's own process", here,
              code="rank-not-in-env")

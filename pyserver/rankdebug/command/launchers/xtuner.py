"""XTuner's ``xtuner MODE [SUBMODE] ARGS`` (``NPROC_PER_NODE=8 xtuner train CONFIG``).

xtuner/entry_point.py (InternLM/xtuner, ``cli()``): MODE is one of ``MODES`` (``train``,
``test``, ``chat``, ...; ``convert`` and ``preprocess`` take a SUBMODE word), each a script
of xtuner/tools. Every mode runs the same way: with ``NNODES`` and ``NPROC_PER_NODE`` (both
``int()`` of the variable, default 1) equal to 1, or ``--launcher slurm`` among the
arguments, ``python TOOL.py ARGS`` as a child process; otherwise ``torchrun
--nnodes=NNODES --node_rank=NODE_RANK --nproc_per_node=NPROC_PER_NODE --master_addr=ADDR
--master_port=PORT TOOL.py ARGS --launcher pytorch`` (ADDR defaults to 127.0.0.1, PORT to a
random one). A value ``int()`` refuses ends the command with a warning: nothing runs.

The entry is the mode (or submode) word, kind "cli": the tool is xtuner's; its arguments
follow it. The one process of the single-process form is a child of xtuner with no rank
variable, which the bootstrap cannot tell from xtuner itself (said at plan time).
"""

from __future__ import annotations

from collections.abc import Sequence

from rankdebug import launcher_table
from rankdebug.command.launchers.base import Context
from rankdebug.command.launchers.common import (
    env_int,
    not_exported,
    program_or_module,
    set_entry,
    single_process,
    unknown_subcommand,
)
from rankdebug.command.plan import LaunchPlan
from rankdebug.command.words import Span, Word

ROW = launcher_table.BY_NAME["xtuner"]
NAME = ROW.name

# entry_point.py's MODES (and `list-dataset-format`, which `modes` has too); the ones that
# take a submode word, with their submodes.
MODES = ("list-cfg", "copy-cfg", "log-dataset", "check-custom-dataset", "train", "test",
         "chat", "convert", "preprocess", "mmbench", "eval_refcoco", "list-dataset-format")
SUBMODES = {"convert": ("pth_to_hf", "merge", "split"), "preprocess": ("arxiv", "refcoco")}
# `xtuner help`, `xtuner version` and their -h/--help/-v/--version forms run nothing.
_SPECIAL = ("help", "version", "-h", "--help", "-v", "--version")
ENV_VARS = ("NNODES", "NODE_RANK", "NPROC_PER_NODE", "ADDR", "PORT")


def matches(argv: Sequence[Word]) -> int | None:
    start = program_or_module(argv, ROW)
    if start is None or start >= len(argv):
        return None
    mode = argv[start].value
    if mode is not None and mode.lower() in _SPECIAL:
        return None
    return start


def parse(ctx: Context, start: int) -> None:
    plan = ctx.plan
    argv = plan.argv
    mode_word = argv[start]
    here = argv[start - 1].span
    not_exported(ctx, ENV_VARS, "xtuner", here)
    mode = mode_word.value
    if mode is None or mode.lower() not in MODES:
        unknown_subcommand(plan, "xtuner", mode_word, MODES)
        return
    tool = start
    subs = SUBMODES.get(mode.lower())
    if subs is not None:
        tool = start + 1
        sub = argv[tool].value if tool < len(argv) else None
        if sub is None or sub.lower() not in subs:
            word = argv[tool] if tool < len(argv) else mode_word
            unknown_subcommand(plan, f"xtuner {mode}", word, subs, missing=tool >= len(argv))
            return
    set_entry(plan, "cli", argv[tool], tool, tool + 1)
    _numbers(ctx, tool, here)


def _numbers(ctx: Context, tool: int, here: Span) -> None:
    plan = ctx.plan
    argv = plan.argv
    module = _tool_module(argv, tool)
    if _slurm_launcher(argv[tool + 1:]):
        single_process(plan)
        plan.warn("with --launcher slurm, xtuner runs the tool once in this process, as one of "
                  "the tasks srun starts (run it under srun)", here, severity="info",
                  code="slurm-tasks")
        return
    nnodes = env_int(ctx, "NNODES", 1)
    nproc = env_int(ctx, "NPROC_PER_NODE", 1)
    if nnodes is None or nproc is None:
        return
    if nnodes == 1 and nproc == 1:
        single_process(plan)
        plan.warn(f"with NNODES and NPROC_PER_NODE at 1, xtuner runs `python -m {module}` in "
                  "a child python with no rank variable: that child is rank 0", here,
                  severity="info", code="rank-in-child")
        return
    plan.nnodes = nnodes
    plan.nproc_per_node = nproc
    plan.node_rank = env_int(ctx, "NODE_RANK", 0)
    plan.world_size = nnodes * nproc
    plan.master_addr = ctx.env.get("ADDR") or Word.literal("127.0.0.1", here)
    plan.master_port = ctx.env.get("PORT")


def _tool_module(argv: Sequence[Word], tool: int) -> str:
    """The module of xtuner's tool for the mode (or submode) at ``argv[tool]``."""
    name = (argv[tool].value or "").lower()
    if tool > 0 and (argv[tool - 1].value or "").lower() == "convert":
        return f"xtuner.tools.model_converters.{name}"
    if tool > 0 and (argv[tool - 1].value or "").lower() == "preprocess":
        return "xtuner.tools.data_preprocess." + ("convert_refcoco" if name == "refcoco"
                                                  else name)
    return "xtuner.tools." + name.replace("-", "_")


def _slurm_launcher(args: Sequence[Word]) -> bool:
    """entry_point.py looks at the first ``--launcher`` word only: slurm if the next is."""
    for i, word in enumerate(args):
        if word.value == "--launcher":
            return i + 1 < len(args) and args[i + 1].value == "slurm"
    return False


def as_task(plan: LaunchPlan, program: Word) -> None:
    """``srun … xtuner train CFG --launcher slurm``: each task runs xtuner, whose tool runs in a
    child; the task's xtuner process, which has the task's variables, is taken for the rank."""
    plan.warn("each task runs xtuner, which runs its tool in a child python: rankdebug takes "
              "the task's xtuner process (it has the rank variables) for the rank, so the "
              "tool's code is not debugged; run the tool itself under srun (python -m "
              "xtuner.tools.train CONFIG --launcher slurm)", program.span, code="rank-in-child")

"""Axolotl's ``axolotl train|evaluate|inference|… CONFIG [OPTIONS] [-- LAUNCHER-ARGS]`` (also
``python -m axolotl.cli.main``).

src/axolotl/cli/main.py (axolotl-ai-cloud/axolotl; click, ``ignore_unknown_options`` and
``allow_extra_args``): ``train``, ``evaluate``, ``inference`` and
``merge-sharded-fsdp-weights`` take ``--launcher accelerate|torchrun|python`` (default
accelerate) and hand the extra arguments (``ctx.args``: the words after ``--``, and every
option click does not know, in order) to it: ``accelerate launch ARGS -m axolotl.cli.CMD
CONFIG …`` or ``torchrun ARGS -m axolotl.cli.CMD CONFIG …`` (src/axolotl/cli/utils/train.py;
``train`` execs it, the others start it as a child). With ``--launcher python``, ``train
--use-ray`` (Ray Train workers) and the commands without a launcher (``preprocess``,
``merge-lora``, ``quantize``), the work runs in axolotl's own process. CONFIG must exist
(``click.Path(exists=True)``).

axolotl knows an option for every key of its config (``--learning-rate``, dashed:
src/axolotl/cli/config_options.py), so an option before ``--`` goes to the launcher when it
is one of the launcher's (as written) and not one of those keys. The entry is
``axolotl.cli.CMD`` (kind "module", at the command's word); its arguments are the words
after it up to ``--``, less the launcher's. accelerate's numbers are read as accelerate
reads them (options, ``--config_file``, its default config), torchrun's as torchrun does.
"""

from __future__ import annotations

from collections.abc import Sequence

from rankdebug import launcher_table
from rankdebug.command.launchers import accelerate, torchrun
from rankdebug.command.launchers.base import Context
from rankdebug.command.launchers.common import (
    can_check,
    program_or_module,
    single_process,
    unknown_subcommand,
)
from rankdebug.command.options import Opt, Parsed, Spec, flag, parse_options, value
from rankdebug.command.plan import Entry, LaunchPlan
from rankdebug.command.words import Span, Word

ROW = launcher_table.BY_NAME["axolotl"]
NAME = ROW.name

# Commands that start a launcher; commands that work in axolotl's own process; the rest.
WITH_LAUNCHER = ("train", "evaluate", "inference", "merge-sharded-fsdp-weights")
IN_PROCESS = ("preprocess", "merge-lora", "quantize")
OTHER_COMMANDS = ("fetch", "vllm-serve", "delinearize-llama4", "generate-cli-config-options",
                  "agent-docs", "config-schema", "lm-eval")
LAUNCHERS = ("accelerate", "torchrun", "python")
# accelerate's options that are also keys of axolotl's config: axolotl's.
_CONFIG_KEYS = ("--gradient-accumulation-steps", "--fsdp-version",
                "--fp8-enable-fsdp-float8-all-gather")

OPTIONS: tuple[Opt, ...] = (
    value("launcher", "--launcher", help="accelerate (default), torchrun or python."),
    value("cloud", "--cloud", help="A cloud configuration: the job runs remotely."),
    value("sweep", "--sweep", help="A sweep configuration: one run per combination."),
    flag("use_ray", "--use-ray", help="Train with Ray Train workers."),
)
_OWN = Spec("axolotl", OPTIONS, complete=False)
# For hovers: axolotl's options and those of the launchers it hands options to.
SPEC = Spec("axolotl", (*OPTIONS, *torchrun.OPTIONS, *(
    o for o in accelerate.OPTIONS if o.name not in {t.name for t in torchrun.OPTIONS})),
    complete=False)


def matches(argv: Sequence[Word]) -> int | None:
    start = program_or_module(argv, ROW)
    if start is None or start >= len(argv):
        return None
    command = argv[start].value
    if command is not None and command.startswith("-"):
        return None  # `axolotl --help`, `--version`
    return start


def parse(ctx: Context, start: int) -> None:
    plan = ctx.plan
    argv = plan.argv
    word = argv[start]
    command = word.value
    if command in OTHER_COMMANDS:
        single_process(plan)
        plan.in_launcher = True
        return
    if command is None or command not in (*WITH_LAUNCHER, *IN_PROCESS):
        unknown_subcommand(plan, "axolotl", word, (*WITH_LAUNCHER, *IN_PROCESS))
        return
    dash = next((i for i in range(start + 1, len(argv)) if argv[i].value == "--"), len(argv))
    ours = _own_options(plan, argv, start + 1, dash)
    launcher = _launcher(plan, ours, command)
    spec = torchrun.SPEC if launcher == "torchrun" else accelerate.SPEC
    handed = _handed_on(argv, start + 1, dash, spec) if launcher in ("torchrun",
                                                                     "accelerate") else []
    # What reaches axolotl.cli.CMD: neither axolotl's own options nor the launcher's.
    dropped = {*handed, *(i for use in ours.uses for i in (use.index, use.value_index)
                          if i is not None)}
    args = [w for i, w in enumerate(argv[start + 1:dash], start + 1) if i not in dropped]
    plan.entry = Entry("module", Word.literal("axolotl.cli." + command.replace("-", "_"),
                                              word.span))
    plan.entry_index = start
    plan.entry_args = args
    _config(ctx, word, args)
    if ours.has("cloud"):
        plan.warn("with --cloud the job runs on a cloud machine, not here", word.span,
                  severity="info", code="remote")
    if launcher is None:
        return
    if launcher == "python" or ours.has("use_ray"):
        single_process(plan)
        plan.in_launcher = True
        if ours.has("use_ray"):
            # Ray Train sets RANK in its workers' os.environ once they run: no rank to pick.
            plan.in_launcher = False
            plan.nnodes = plan.node_rank = plan.nproc_per_node = plan.world_size = None
            plan.warn("with --use-ray, axolotl trains with Ray Train workers as its config's "
                      "ray_num_workers says, which is not read here", word.span,
                      code="ray-workers")
        return
    words = [argv[i] for i in handed] + list(argv[dash + 1:])
    _launched(ctx, launcher, words, word.span)


def _own_options(plan: LaunchPlan, argv: Sequence[Word], start: int, end: int) -> Parsed:
    """axolotl's own options (``--launcher``, ``--cloud``…) among ``argv[start:end]``; click
    reads them anywhere before ``--``."""
    found = Parsed(start=start, end=end)
    for i in range(start, end):
        text = argv[i].value or ""
        name = text.split("=", 1)[0]
        opt = _OWN.exact(name) if name.startswith("--") else None
        if opt is not None:
            width = 1 if "=" in text else 1 + opt.nargs
            found.uses += parse_options(plan, argv[:min(i + width, end)], i, _OWN).uses
    return found


def _handed_on(argv: Sequence[Word], start: int, end: int, spec: Spec) -> list[int]:
    """Indexes of the launcher options (and their values) among ``argv[start:end]``: the
    options axolotl does not know, which click hands on with the words after ``--``."""
    out: list[int] = []
    i = start
    while i < end:
        text = argv[i].value or ""
        name = text.split("=", 1)[0]
        opt = spec.exact(name) if name.startswith("-") and name not in _CONFIG_KEYS else None
        if opt is None or _OWN.exact(name) is not None:
            i += 1
            continue
        width = 1 if "=" in text or not opt.takes_value else 1 + opt.nargs
        out += range(i, min(i + width, end))
        i += width
    return out


def _launcher(plan: LaunchPlan, ours: Parsed, command: str) -> str | None:
    """The launcher axolotl starts; None where the work runs in axolotl's process or the
    choice is not known."""
    if command in IN_PROCESS:
        single_process(plan)
        plan.in_launcher = True
        return None
    use = ours.get("launcher")
    if use is None:
        return "accelerate"
    word = use.value
    if word is None:
        return None
    if word.value is None:
        plan.warn(f"--launcher is {word.display}, which is not known", word.span)
        return None
    if word.value not in LAUNCHERS:
        plan.warn(f"axolotl's --launcher is one of {', '.join(LAUNCHERS)}, not {word.value}",
                  word.span, code="bad-value", severity="error")
        return None
    return word.value


def _config(ctx: Context, command: Word, args: Sequence[Word]) -> None:
    """CONFIG, the command's first positional word: given, and there (click checks)."""
    plan = ctx.plan
    first = args[0] if args else None
    if first is None or (first.value or "").startswith("-"):
        if first is None or all(w.known for w in args):
            plan.warn(f"axolotl {command.display} needs a config file after it", command.span,
                      code="missing-config", severity="error")
        return
    text = first.value
    if text is not None and "://" not in text and can_check(ctx, text) and (
        ctx.resolve(text) is None
    ):
        plan.warn(f"the config file {text} does not exist", first.span, code="missing-config")


def _launched(ctx: Context, launcher: str, words: Sequence[Word], here: Span) -> None:
    """The launcher's numbers from the arguments axolotl hands it."""
    plan = ctx.plan
    spec = torchrun.SPEC if launcher == "torchrun" else accelerate.SPEC
    parsed = parse_options(plan, words, 0, spec)
    if parsed.end < len(words):
        word = words[parsed.end]
        plan.warn(f"{word.display} is handed to {spec.tool}, which takes it for its program "
                  "(axolotl's module comes after)", word.span, code="bad-value",
                  severity="error")
    if launcher == "torchrun":
        torchrun.numbers_of(ctx, parsed)
    else:
        accelerate.numbers(ctx, parsed, here)

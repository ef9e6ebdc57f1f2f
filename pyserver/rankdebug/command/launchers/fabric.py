"""Lightning Fabric's ``fabric run [OPTIONS] SCRIPT [ARGS]`` (``fabric run model`` until
Lightning 2.2, the legacy ``lightning run model`` until early 2025; ``python -m
lightning.fabric.cli SCRIPT``).

src/lightning/fabric/cli.py (Lightning-AI/pytorch-lightning, ``_run`` and
``_torchrun_launch``): click with ``ignore_unknown_options``, so fabric's options are read
wherever they stand, before or after the script, up to ``--``; an option it does not know
after the script is the script's (before it, click takes it for the script). Options:
``--accelerator`` (cpu, gpu, cuda, mps, tpu, auto), ``--strategy`` (``dp``: one process),
``--devices`` (default "1": a count, ``-1`` for every GPU, a list ``0,1``, or ``auto``,
which is 1), ``--num-nodes``/``--num_nodes`` (1), ``--node-rank``/``--node_rank`` (0),
``--main-address`` (127.0.0.1), ``--main-port`` (29400), ``--precision``. It then runs
torchrun's ``main()`` in its own process with ``--nproc_per_node``, ``--nnodes``,
``--node_rank``, ``--master_addr``, ``--master_port`` and the script: torchrun's ranks.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from rankdebug import launcher_table
from rankdebug.command.launchers.base import Context
from rankdebug.command.launchers.common import (
    basename,
    device_count,
    product,
    python_module_start,
    read_int,
    set_entry,
    warn_unknown_program,
    why,
)
from rankdebug.command.options import Opt, Spec, flag, fully_unknown, join_spans, value
from rankdebug.command.plan import LaunchPlan, OptionUse
from rankdebug.command.words import Span, Word

ROW = launcher_table.BY_NAME["fabric"]
NAME = ROW.name
ACCELERATORS = ("cpu", "gpu", "cuda", "mps", "tpu", "auto")
# Strategies `fabric run` leaves out of its choices (cli.py's `_get_supported_strategies`).
_EXCLUDED = re.compile(r".*(spawn|fork|notebook|xla|tpu|offload).*")

OPTIONS: tuple[Opt, ...] = (
    flag("help", "--help", help="Show help and exit."),
    value("accelerator", "--accelerator", help="cpu, gpu, cuda, mps, tpu or auto."),
    value("strategy", "--strategy", help="How to run across devices (dp: one process)."),
    value("devices", "--devices", help="Devices per node: a count, -1 for all GPUs, a list "
          "(0,1) or auto (default 1)."),
    value("num_nodes", "--num-nodes", "--num_nodes", help="Number of nodes (default 1)."),
    value("node_rank", "--node-rank", "--node_rank", help="Rank of this node (default 0)."),
    value("main_address", "--main-address", "--main_address",
          help="Address of node 0 (default 127.0.0.1)."),
    value("main_port", "--main-port", "--main_port", help="Port on node 0 (default 29400)."),
    value("precision", "--precision", help="Numeric precision (32-true, bf16-mixed...)."),
)
SPEC = Spec("fabric run", OPTIONS)


def matches(argv: Sequence[Word]) -> int | None:
    if not argv:
        return None
    name = basename(argv[0])
    values = [w.value for w in argv[1:4]]
    if name == "fabric" and values[:1] == ["run"]:
        return 3 if values[1:2] == ["model"] and len(argv) > 3 else 2
    if name == "lightning" and values[:2] == ["run", "model"]:
        return 3
    return python_module_start(argv, ROW.modules)  # `python -m lightning.fabric.cli SCRIPT`


@dataclass
class _Read:
    """What click reads of ``fabric run``'s arguments."""

    uses: dict[str, OptionUse] = field(default_factory=dict)
    # argv indexes of fabric's own options after the script (not the script's arguments).
    ours: set[int] = field(default_factory=set)
    script: int | None = None
    # A word not known here that may hold fabric's options.
    opaque: Word | None = None

    def text(self, name: str) -> str | None:
        use = self.uses.get(name)
        return None if use is None or use.value is None else use.value.value


def parse(ctx: Context, start: int) -> None:
    plan = ctx.plan
    argv = plan.argv
    here = argv[start - 1].span
    read = _read(ctx, start)
    if "help" in read.uses:
        return
    if read.script is None:
        plan.warn("fabric run is given no script to run", argv[-1].span, code="missing-entry")
    else:
        at = read.script
        set_entry(plan, "script", argv[at], at, at + 1)
        plan.entry_args = [w for i, w in enumerate(argv[at + 1:], at + 1) if i not in read.ours]
        warn_unknown_program(plan, "script", argv[at])
    if read.opaque is not None:
        plan.warn(f"{read.opaque.display} is not known{why(read.opaque)}; it may hold fabric "
                  "run options", read.opaque.span)
        return
    nproc = _processes(ctx, read, here)
    nodes = _int(plan, read.uses.get("num_nodes"), 1)
    plan.nproc_per_node = nproc
    plan.nnodes = nodes
    plan.node_rank = _int(plan, read.uses.get("node_rank"), 0)
    plan.world_size = product(nproc, nodes)
    address, port = read.uses.get("main_address"), read.uses.get("main_port")
    plan.master_addr = address.value if address else Word.literal("127.0.0.1", here)
    plan.master_port = port.value if port else Word.literal("29400", here)


def _read(ctx: Context, start: int) -> _Read:
    """fabric's options wherever they stand (click's way), and where the script is."""
    plan = ctx.plan
    argv = plan.argv
    read = _Read()
    i = start
    while i < len(argv):
        word = argv[i]
        text = word.value
        if text == "--":
            read.ours.add(i)
            if read.script is None and i + 1 < len(argv):
                read.script = i + 1
            break
        if text is None or not text.startswith("-") or text == "-":
            if read.script is None and text is None and not fully_unknown(word) and (
                word.known_prefix.startswith("-")
            ):
                read.opaque = read.opaque or word
            elif read.script is None:
                read.script = i
            i += 1
            continue
        name = text.split("=", 1)[0]
        opt = SPEC.exact(name)
        if opt is None:
            if read.script is None:
                _unknown_before_script(ctx, word, name)
            i += 1
            continue
        i = _option(ctx, read, opt, i, name)
    _check_choices(ctx, read)
    return read


def _option(ctx: Context, read: _Read, opt: Opt, i: int, name: str) -> int:
    """Record the option at ``argv[i]`` (spelled ``name``); the index after it."""
    plan = ctx.plan
    argv = plan.argv
    word = argv[i]
    attached = "=" in (word.value or "")
    width = 1 if attached or not opt.takes_value else 2
    values = [word.suffix_after(len(name) + 1)] if attached else list(argv[i + 1:i + width])
    if opt.takes_value and not values:
        plan.warn(f"{name} needs a value", word.span, code="missing-value", severity="error")
    last = argv[min(i + width, len(argv)) - 1]
    use = OptionUse(opt.name, name, values[0] if values else None,
                    join_spans(word.span, last.span))
    plan.options.append(use)
    read.uses[opt.name] = use
    if read.script is not None:
        read.ours.update(range(i, min(i + width, len(argv))))
    return i + width


def _unknown_before_script(ctx: Context, word: Word, name: str) -> None:
    best = SPEC.suggest(name)
    hint = f"; did you mean {best}?" if best else ""
    ctx.plan.warn(f"fabric run has no option {name}{hint} (before the script, click takes it "
                  "for the script)", word.span, code="unknown-flag", severity="error",
                  fix=best if best and word.value == name else None)


def _check_choices(ctx: Context, read: _Read) -> None:
    plan = ctx.plan
    accel, strategy = read.text("accelerator"), read.text("strategy")
    if accel is not None and accel not in ACCELERATORS:
        plan.warn(f"--accelerator is one of {', '.join(ACCELERATORS)}, not {accel}",
                  read.uses["accelerator"].span, code="bad-value", severity="error")
    if strategy is not None and _EXCLUDED.match(strategy):
        plan.warn(f"fabric run does not offer the {strategy} strategy (it starts the processes "
                  "itself)", read.uses["strategy"].span, code="bad-value", severity="error")


def _processes(ctx: Context, read: _Read, here: Span) -> int | None:
    """Processes per node, as ``_get_num_processes`` counts them."""
    plan = ctx.plan
    if read.text("strategy") == "dp":
        return 1
    use = read.uses.get("devices")
    word = use.value if use is not None else Word.literal("1", here)
    if word is None:
        return None
    if word.value is None:
        plan.warn(f"--devices is {word.display}, which is not known{why(word)}", word.span)
        return None
    text, span, accel = word.value.strip(), word.span, read.text("accelerator")
    if accel == "tpu":
        plan.warn("fabric run cannot start processes for TPUs", span, code="bad-value",
                  severity="error")
        return None
    if text == "auto":
        return 1
    if text.isdigit() and int(text) > 0:
        return int(text)
    if accel == "cpu":
        plan.warn(f"with --accelerator cpu, --devices is a number of processes, not {text}",
                  span, code="bad-value", severity="error")
        return None
    if text == "-1":
        return device_count(ctx, "--devices -1 (every GPU)", span)
    items = [t.strip() for t in text.strip("[]() ").split(",") if t.strip()]
    if "," in text and items and all(t.isdigit() for t in items):
        return len(items)
    plan.warn(f"--devices {text} starts no process", span, code="bad-value", severity="error")
    return None


def _int(plan: LaunchPlan, use: OptionUse | None, default: int) -> int | None:
    if use is None:
        return default
    return None if use.value is None else read_int(plan, use.value, use.flag)

"""Megatron-LM and MindSpeed (``pretrain_gpt.py --train-iters ... --micro-batch-size ...``):
argparse flags spelled with dashes only (megatron/training/arguments.py).

The global batch is one micro-batch per data-parallel rank; the tensor, pipeline and context
parallel sizes are kept, and the smoke run keeps the ranks they need."""

from __future__ import annotations

from rankdebug.smoke import base
from rankdebug.smoke.context import Rewrite, as_int, smaller
from rankdebug.smoke.knobs import Flags, drop, tune

NAME = "megatron"
PACKAGES: tuple[str, ...] = ("megatron",)
MARKERS = ("--micro-batch-size", "--train-iters", "--train-samples",
           "--tensor-model-parallel-size", "--global-batch-size")
PARALLEL = ("tensor-model-parallel-size", "pipeline-model-parallel-size",
            "context-parallel-size")
SEQUENCES = ("seq-length", "decoder-seq-length", "encoder-seq-length")
INPUT_FLAGS = (("tokenizer", "vocab-file"), ("tokenizer", "merge-file"),
               ("tokenizer", "tokenizer-model"))


def _flags(rw: Rewrite) -> Flags:
    return Flags(rw.args, dashes=False)


def detect(rw: Rewrite) -> bool:
    if any(rw.args.find((m,)) is not None for m in MARKERS):
        return True
    return "from megatron" in (rw.source or "")


def parallel(rw: Rewrite) -> int:
    knobs = _flags(rw)
    need = 1
    for name in PARALLEL:
        found = knobs.find(name)
        if found is not None:
            size = as_int(found.value) if found.known else None
            if size is None:
                rw.note(f"--{name} {found.value} is not known here: the smoke run may have "
                        "too few ranks for it")
            need *= max(1, size or 1)
    return need


def rewrite(rw: Rewrite) -> None:
    if "megatron" in (rw.source or "") or rw.entry_path is None:
        rw.need(*PACKAGES)  # a script that only takes its flags (Megatron-DeepSpeed) need not
    knobs = _flags(rw)
    steps, dp = rw.settings.steps, rw.data_parallel
    if knobs.find("train-samples") is not None:
        tune(rw, knobs, "train-samples", steps * dp, base.steps_why(steps))
        _warmup(rw, knobs, "samples", steps * dp)
    else:
        tune(rw, knobs, "train-iters", steps, base.steps_why(steps))
        _warmup(rw, knobs, "iters", steps)
    tune(rw, knobs, "micro-batch-size", 1, base.BATCH)
    tune(rw, knobs, "global-batch-size", dp, f"one micro-batch per data-parallel rank ({dp})",
         present_only=True)
    ramp = rw.args.remove(("--rampup-batch-size",), greedy=True)  # three values
    if ramp is not None:
        rw.change(ramp.flag, ramp.value, None, "no batch-size ramp-up in a few steps", ramp.flag)
    for name in SEQUENCES:
        tune(rw, knobs, name, rw.settings.seq_len, base.SEQUENCE, present_only=True,
             keep_if=smaller(rw.settings.seq_len))
    tune(rw, knobs, "eval-iters", 0, base.NO_EVAL)
    drop(rw, knobs, "save", base.NO_SAVE)
    for name in ("tensorboard-dir", "wandb-project"):
        drop(rw, knobs, name, base.NO_REMOTE)
    tune(rw, knobs, "num-workers", 0, base.WORKERS, keep_if=smaller(0))
    tune(rw, knobs, "log-interval", 1, base.LOG_EVERY, present_only=True)
    _inputs(rw)


def _warmup(rw: Rewrite, knobs: Flags, unit: str, total: int) -> None:
    """Megatron asserts warm-up < decay; without --lr-decay-*, decay is the whole run."""
    if knobs.find(f"lr-decay-{unit}") is not None:
        return
    warm = knobs.find(f"lr-warmup-{unit}")
    if warm is not None and (as_int(warm.value) or 0) >= total:
        tune(rw, knobs, f"lr-warmup-{unit}", max(0, total - 1),
             "the warm-up must end before the run does (Megatron asserts it)")


def _inputs(rw: Rewrite) -> None:
    hit = rw.args.find(("--data-path",))
    if hit is not None:
        # --data-path [weight] prefix [weight] prefix ...: each prefix names .bin and .idx.
        words = [hit.value] if hit.joined and hit.value else []
        for arg in rw.args.items[hit.index + 1:]:
            if arg.text.startswith("--"):
                break
            if arg.known and not _is_float(arg.text):
                words.append(arg.text)
        for prefix in words:
            rw.reads("data-prefix", prefix, "--data-path")
    knobs = _flags(rw)
    for kind, name in INPUT_FLAGS:
        found = knobs.find(name)
        if found is not None and found.known:
            rw.reads(kind, found.value, found.where)


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True

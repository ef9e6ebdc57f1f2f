"""DeepSpeed JSON configs: ``train_micro_batch_size_per_gpu`` 1, ``gradient_accumulation_steps``
1 and ``train_batch_size`` kept consistent (micro x accumulation x data-parallel ranks), no
remote monitors. The user's file is never edited: the smoke run gets a changed copy.

Found behind ``--deepspeed``/``--deepspeed_config``/``--ds_config`` (HF Trainer, DeepSpeed
scripts), accelerate's ``--deepspeed_config_file``, or a ``deepspeed:`` key of a config the
framework module reads (LLaMA-Factory), which then calls :func:`shrink` itself."""

from __future__ import annotations

from rankdebug.smoke import base, configs
from rankdebug.smoke.args import ArgList, spellings
from rankdebug.smoke.context import Rewrite
from rankdebug.smoke.knobs import Keys, tune

NAME = "deepspeed_json"
PACKAGES: tuple[str, ...] = ("deepspeed",)
ENTRY_FLAGS = spellings("--deepspeed", "--deepspeed_config", "--ds_config")
HEAD_FLAGS = spellings("--deepspeed_config_file")
MONITORS = ("wandb", "tensorboard", "csv_monitor", "comet")
MONITOR = "no metrics monitor: nothing is written or sent to a service"


def detect(rw: Rewrite) -> bool:
    return any(_config_hit(args, flags) is not None
               for args, flags in ((rw.args, ENTRY_FLAGS), (rw.head, HEAD_FLAGS)))


def parallel(rw: Rewrite) -> int:
    return 1


def rewrite(rw: Rewrite) -> None:
    for args, flags in ((rw.args, ENTRY_FLAGS), (rw.head, HEAD_FLAGS)):
        hit = _config_hit(args, flags)
        if hit is None:
            continue
        flag, value = hit
        copy = shrink(rw, value, flag)
        if copy is not None:
            args.set((flag,), copy)


def _config_hit(args: ArgList, flags: tuple[str, ...]) -> tuple[str, str] | None:
    for flag in flags:
        hit = args.find((flag,))
        if hit is not None and hit.value and hit.value.endswith(".json"):
            return hit.flag, hit.value
    return None


def shrink(rw: Rewrite, path_text: str, where: str) -> str | None:
    """Write the smoke copy of the DeepSpeed config ``path_text`` (named by ``where``);
    returns the copy's path, or None when nothing needed changing (or it cannot be read)."""
    rw.need(*PACKAGES)
    path = rw.resolve(path_text)
    if rw.folder.holds(path):
        return None  # already the smoke copy
    rw.reads("config", path_text, where)
    data = configs.load(path)
    if data is None:
        rw.lack(f"the DeepSpeed config {path_text} cannot be read here: its batch sizes "
                "are left as they are")
        return None
    keys = Keys(data, path_text)
    before = len(rw.changes)
    micro = keys.find("train_micro_batch_size_per_gpu")
    accumulation = keys.find("gradient_accumulation_steps")
    if micro is not None and _is_int(micro.value):
        tune(rw, keys, "train_micro_batch_size_per_gpu", 1, base.BATCH)
    if accumulation is not None and _is_int(accumulation.value):
        tune(rw, keys, "gradient_accumulation_steps", 1, base.ACCUMULATION)
    total = keys.find("train_batch_size")
    if total is not None and _is_int(total.value):
        # DeepSpeed refuses a train_batch_size other than micro x accumulation x dp ranks.
        tune(rw, keys, "train_batch_size", rw.data_parallel,
             f"kept consistent: 1 x 1 x {rw.data_parallel} data-parallel ranks")
    for monitor in MONITORS:
        if configs.dotted(data, f"{monitor}.enabled") is True:
            tune(rw, keys, f"{monitor}.enabled", False, MONITOR)
    if len(rw.changes) == before:
        return None
    copy = rw.folder.write(path.name, configs.dump(data, ".json", f"smoke copy of {path}"))
    rw.copied(path, copy)
    return str(copy)


def _is_int(value: str | None) -> bool:
    return value is not None and value.lstrip("-").isdigit()

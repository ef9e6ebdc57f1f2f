"""torchtitan (``torchrun ... -m torchtitan.train --job.config_file X.toml [--training.steps
N ...]``): a knob set on the command line is changed there, any other in a copy of the TOML
(whose booleans the command line cannot always turn off). The newer form, ``--module M
--config NAME``, names a Python config: only ``--training.steps`` is known to exist there
(run_train.sh passes it)."""

from __future__ import annotations

from pathlib import Path

from rankdebug.smoke import base, configs
from rankdebug.smoke.args import spellings
from rankdebug.smoke.context import Rewrite, as_int, smaller
from rankdebug.smoke.knobs import Flags, Keys, Layered, first, tune

NAME = "torchtitan"
PACKAGES: tuple[str, ...] = ("torchtitan",)
CONFIG_FLAGS = spellings("--job.config_file")
PARALLEL = ("parallelism.tensor_parallel_degree", "parallelism.pipeline_parallel_degree",
            "parallelism.context_parallel_degree")
# Booleans that write files, profile or log remotely, or evaluate, across versions.
OFF = (("checkpoint.enable_checkpoint", base.NO_SAVE), ("checkpoint.enable", base.NO_SAVE),
       ("metrics.enable_tensorboard", base.NO_REMOTE), ("metrics.enable_wandb", base.NO_REMOTE),
       ("validation.enabled", base.NO_EVAL), ("validation.enable", base.NO_EVAL),
       ("profiling.enable_profiling", "no profiler traces"))
INPUTS = (("tokenizer", "model.tokenizer_path"), ("tokenizer", "model.hf_assets_path"),
          ("data", "training.dataset_path"), ("model", "checkpoint.initial_load_path"))


def detect(rw: Rewrite) -> bool:
    module = rw.entry_module() or ""
    path = rw.entry_path
    return (module.startswith("torchtitan") or (path is not None and path.parts[-2:] == (
        "torchtitan", "train.py")) or rw.args.find(CONFIG_FLAGS) is not None)


def _config(rw: Rewrite) -> tuple[Path, str, dict[str, object]] | None:
    hit = rw.args.find(CONFIG_FLAGS)
    if hit is None or not hit.value:
        return None
    data = rw.config(hit.value)
    if data is None:
        rw.lack(f"{hit.value} cannot be read here: only command-line knobs are changed")
        return None
    return rw.resolve(hit.value), hit.value, data


def _knobs(rw: Rewrite, config: tuple[Path, str, dict[str, object]] | None) -> Layered:
    keys = Keys(config[2], config[1]) if config else None
    return Layered(Flags(rw.args), keys)


def parallel(rw: Rewrite) -> int:
    knobs = _knobs(rw, _config(rw))
    need = 1
    for key in PARALLEL:
        found = knobs.find(key)
        need *= max(1, as_int(found.value) or 1) if found else 1
    return need


def rewrite(rw: Rewrite) -> None:
    rw.need(*PACKAGES)
    config = _config(rw)
    knobs = _knobs(rw, config)
    steps = rw.settings.steps
    tune(rw, knobs, "training.steps", steps, base.steps_why(steps))
    batch = first(knobs, "training.local_batch_size", "training.batch_size")
    if batch is not None:
        tune(rw, knobs, batch, 1, base.BATCH)
    else:
        rw.lack("no batch size found (training.local_batch_size or training.batch_size): "
                "the batch is the config's")
    if knobs.find("training.global_batch_size") is not None:
        tune(rw, knobs, "training.global_batch_size", -1,
             "derived: one sample on each data-parallel rank", keep_if=smaller(0))
    if config is not None or knobs.find("training.seq_len") is not None:
        tune(rw, knobs, "training.seq_len", rw.settings.seq_len, base.SEQUENCE,
             keep_if=smaller(rw.settings.seq_len))
    else:
        rw.lack("no sequence length found: the config named by --config keeps its own")
    tune(rw, knobs, "lr_scheduler.warmup_steps", max(0, steps - 1),
         "the warm-up ends within the run", present_only=True, keep_if=smaller(steps - 1))
    for key, why in OFF:
        found = knobs.find(key)
        if found is not None and (found.value or "").lower() == "true":
            tune(rw, knobs, key, False, why)
    for key in ("parallelism.data_parallel_shard_degree",
                "parallelism.data_parallel_replicate_degree"):
        found = knobs.find(key)
        if found is not None and (as_int(found.value) or -1) > 1:
            value = -1 if key.endswith("shard_degree") else 1
            tune(rw, knobs, key, value, "data parallelism fits the smoke run's ranks")
    for kind, key in INPUTS:
        found = knobs.find(key)
        if found is not None and found.known:
            rw.reads(kind, found.value, found.where)
    if config is not None and knobs.keys is not None and any(
            c.where.startswith(f"{config[1]}:") for c in rw.changes):
        path, _, data = config
        copy = rw.folder.write(path.name, configs.dump(data, ".toml", f"smoke copy of {path}"))
        rw.args.set(CONFIG_FLAGS, str(copy))
        rw.copied(path, copy)

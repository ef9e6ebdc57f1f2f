"""LLaMA-Factory: ``llamafactory-cli train x.yaml [key=value ...]`` (or ``python src/train.py
x.yaml``, or the same knobs as flags when no YAML is given).

The YAML is never copied: LLaMA-Factory merges ``key=value`` words after it over the file
(hparams/parser.py, ``OmegaConf.from_cli(sys.argv[2:])``), so every change is an override
on the command line. A DeepSpeed config the YAML names gets a smoke copy."""

from __future__ import annotations

from rankdebug.smoke import base, configs, deepspeed_json, hf_trainer
from rankdebug.smoke.context import Rewrite, smaller
from rankdebug.smoke.knobs import Flags, Knobs, Overrides, tune

NAME = "llamafactory"
PACKAGES: tuple[str, ...] = ("llamafactory",)
TRAIN_COMMANDS = ("train", "sft", "dpo", "rm")
_CONFIG_SUFFIXES = (".yaml", ".yml", ".json")


def detect(rw: Rewrite) -> bool:
    if rw.plan.launcher == "llamafactory-cli" or (rw.entry_module() or "").startswith(
            "llamafactory"):
        return bool(rw.args.items) and rw.args.items[0].text in TRAIN_COMMANDS
    source = rw.source or ""
    return ("llamafactory" in source and "run_exp" in source) and _config_index(rw) is not None


def parallel(rw: Rewrite) -> int:
    return 1


def _config_index(rw: Rewrite) -> int | None:
    for i, arg in enumerate(rw.args.items[:2]):
        if arg.known and arg.text.endswith(_CONFIG_SUFFIXES):
            return i
    return None


def rewrite(rw: Rewrite) -> None:
    rw.need(*PACKAGES)
    at = _config_index(rw)
    knobs: Knobs
    if at is None:
        knobs = Flags(rw.args)
    else:
        label = rw.args.items[at].text
        data = configs.load(rw.resolve(label))
        rw.reads("config", label, "the LLaMA-Factory config")
        if data is None:
            rw.lack(f"{label} cannot be read here: the overrides below are written without "
                    "its values")
        knobs = Overrides(rw.args, data, label)
    _shrink(rw, knobs)


def _shrink(rw: Rewrite, knobs: Knobs) -> None:
    hf_trainer.training_steps(rw, knobs)  # LLaMA-Factory's arguments are TrainingArguments
    tune(rw, knobs, "cutoff_len", rw.settings.seq_len, base.SEQUENCE,
         keep_if=smaller(rw.settings.seq_len))
    n = base.samples(rw)
    tune(rw, knobs, "max_samples", n, base.SLICE, keep_if=smaller(n))
    tune(rw, knobs, "preprocessing_num_workers", 1,
         "the tiny slice is prepared in one process", present_only=True, keep_if=smaller(1))
    tune(rw, knobs, "dataloader_num_workers", 0, base.WORKERS, present_only=True,
         keep_if=smaller(0))
    tune(rw, knobs, "eval_strategy", "no", base.NO_EVAL, present_only=True)
    tune(rw, knobs, "val_size", 0, base.NO_EVAL, present_only=True, keep_if=smaller(0))
    tune(rw, knobs, "do_eval", False, base.NO_EVAL, present_only=True)
    tune(rw, knobs, "eval_dataset", "null", base.NO_EVAL, present_only=True)
    hf_trainer.training_outputs(rw, knobs)
    tune(rw, knobs, "logging_steps", 1, base.LOG_EVERY, present_only=True)
    ds = knobs.find("deepspeed")
    if ds is not None and ds.value:
        copy = deepspeed_json.shrink(rw, ds.value, ds.where)
        if copy is not None:
            knobs.put("deepspeed", copy)
    model = knobs.find("model_name_or_path")
    if model is not None:
        rw.reads("model", model.value, model.where, hub=True)
    adapter = knobs.find("adapter_name_or_path")
    if adapter is not None:
        rw.reads("model", adapter.value, adapter.where, hub=True)
    if knobs.find("dataset") is not None:
        folder = knobs.find("dataset_dir")
        where = folder.where if folder else "dataset_dir (default: data)"
        rw.reads("data", f"{folder.value if folder else 'data'}/dataset_info.json", where)


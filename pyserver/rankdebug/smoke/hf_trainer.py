"""Hugging Face ``Trainer`` scripts: any entry script whose source uses ``HfArgumentParser``
or ``TrainingArguments`` (transformers' examples, TRL, most fine-tuning repos).

``TrainingArguments`` fields exist in every such script (``--max_steps``,
``--per_device_train_batch_size``, ``--save_strategy``, ``--report_to``); data fields
(``--max_train_samples``, ``--block_size``, ``--max_seq_length``) only where the script
defines them, which is read from its source. A script given one ``.yaml``/``.json`` file
(``parse_yaml_file``) gets a changed copy of it instead of flags.

A flag is only written where the script's parser reads it (``reads.py``): TrainingArguments
among the dataclasses its HfArgumentParser parses from the command line, a data field of one
of them, an argparse option. A script that builds TrainingArguments in code gets them set at
run time instead (``hook.py``: as TrainingArguments is made), and the smoke run ends the job
itself after its steps; a data knob no parser reads is reported as not applied.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from rankdebug.smoke import base, configs, reads
from rankdebug.smoke.context import Rewrite, plain_text, smaller
from rankdebug.smoke.knobs import Flags, Keys, Knobs, RunTime, drop, tune

NAME = "hf_trainer"
PACKAGES: tuple[str, ...] = ("transformers",)
_MARKER = re.compile(r"\b(HfArgumentParser|(Seq2Seq)?TrainingArguments|SFTConfig)\b")
SEQUENCE_KNOBS = ("max_seq_length", "block_size", "max_length", "max_source_length",
                  "max_target_length", "max_seq_len", "max_prompt_length", "cutoff_len")
# Inputs the command may name, by the fields of transformers' examples and TRL.
INPUTS = (("model", "model_name_or_path", True), ("model", "config_name", True),
          ("tokenizer", "tokenizer_name", True), ("data", "train_file", False),
          ("data", "validation_file", False), ("data", "dataset_name", True),
          ("model", "resume_from_checkpoint", False))
BUILT_IN_CODE = "not applied: the script builds its arguments in code"
UNCHECKED = "not applied: the script reads its command line in a way rankdebug cannot check"


def detect(rw: Rewrite) -> bool:
    return rw.source is not None and bool(_MARKER.search(rw.source))


def parallel(rw: Rewrite) -> int:
    return 1


def defines(source: str, name: str) -> bool:
    """Whether the script defines field or option ``name`` (a dataclass field, an
    ``add_argument``), so that the flag is accepted."""
    return bool(re.search(rf"^\s+{name}\s*:|[\"']--{name}[\"']", source, re.MULTILINE))


def rewrite(rw: Rewrite) -> None:
    rw.need(*PACKAGES)
    source = rw.source or ""
    reading = reads.read(source)
    config = _config_file(rw, reading)
    if config is not None:
        path, data = config
        keys = Keys(data, rw.args.items[0].text)
        shrink(rw, keys, keys, reading)
        copy = rw.folder.write(path.name, configs.dump(data, path.suffix,
                                                       f"smoke copy of {path}"))
        rw.args.items[0].text = str(copy)
        rw.copied(path, copy)
        return
    flags = Flags(rw.args)
    if reading.training_parsed:
        shrink(rw, flags, flags, reading)
        return
    # TrainingArguments are built in code: set as they are made, and the run ends itself.
    why = UNCHECKED if reading.unknown else BUILT_IN_CODE
    if rw.hook_reaches:
        shrink(rw, _run_time(rw, reading), flags, reading)
    else:  # the ranks may start on other machines, where the hook is not
        for name in ("max_steps", "per_device_train_batch_size", "save_strategy",
                     "output_dir", "report_to"):
            rw.unapplied(name, f"{why}, and the ranks may start out of the run-time hook's "
                         "reach")
    rw.stop_after_steps(why.removeprefix("not applied: "))
    if not reading.argv and not reading.unknown and rw.args.items:
        rw.note("the script reads no command line: its arguments "
                f"({' '.join(rw.args.texts[:4])}{' ...' if len(rw.args.items) > 4 else ''}) "
                "change nothing, as in the full run")


def _run_time(rw: Rewrite, reading: reads.Reading) -> RunTime:
    """TrainingArguments' fields as the script's call writes them, set by the hook."""
    written: dict[str, tuple[str, bool]] = {}
    label = "TrainingArguments, set at run time"
    if reading.built:
        built = reading.built[0]
        script = rw.plan.entry.target.display if rw.plan.entry else "the script"
        label = f"{built.cls}(...) at {script}:{built.line}, set at run time"
        for name, text in built.keywords.items():
            literal = name in built.literal
            written[name] = (plain_text(ast.literal_eval(text)) or "None" if literal else text,
                             literal)
    return RunTime(written, label, rw.runtime_args)


def training_steps(rw: Rewrite, knobs: Knobs) -> None:
    """TrainingArguments' step limit, batch and accumulation (LLaMA-Factory's too)."""
    steps = rw.settings.steps
    epochs = knobs.find("num_train_epochs")
    why = base.steps_why(steps)
    if epochs is not None and knobs.find("max_steps") is None:
        why += f" (num_train_epochs {epochs.value} no longer decides)"
    tune(rw, knobs, "max_steps", steps, why)
    tune(rw, knobs, "per_device_train_batch_size", 1, base.BATCH)
    tune(rw, knobs, "gradient_accumulation_steps", 1, base.ACCUMULATION, present_only=True)


def training_outputs(rw: Rewrite, knobs: Knobs, *, always_output: bool = False) -> None:
    """TrainingArguments' checkpoints, output folder and remote logging (LLaMA-Factory's too).
    ``always_output``: set the output folder even where the command names none (the Trainer
    then writes to ``trainer_output`` in the working folder)."""
    tune(rw, knobs, "save_strategy", "no", base.NO_SAVE)
    if always_output or knobs.find("output_dir") is not None:
        tune(rw, knobs, "output_dir", str(rw.folder.subdir("output")), base.OUTPUT)
    tune(rw, knobs, "report_to", "none", base.NO_REMOTE)


def shrink(rw: Rewrite, knobs: Knobs, data: Knobs, reading: reads.Reading) -> None:
    """The TrainingArguments knobs (``knobs``: flags, a config's keys, or set at run time),
    then the script's data knobs (``data``), each where the script reads it."""
    source = rw.source or ""
    training_steps(rw, knobs)
    for name in ("eval_strategy", "evaluation_strategy"):
        tune(rw, knobs, name, "no", base.NO_EVAL, present_only=True)
    for name in ("do_eval", "do_predict", "load_best_model_at_end"):
        _off(rw, knobs, name)
    training_outputs(rw, knobs, always_output=True)
    tune(rw, knobs, "dataloader_num_workers", 0, base.WORKERS, present_only=True,
         keep_if=smaller(0))
    tune(rw, knobs, "logging_steps", 1, base.LOG_EVERY, present_only=True)
    if data.find("max_train_samples") is not None or defines(source, "max_train_samples"):
        n = base.samples(rw)
        if _reaches(rw, data, reading, "max_train_samples"):
            tune(rw, data, "max_train_samples", n, base.SLICE, keep_if=smaller(n))
    else:
        rw.lack("no data-set slice found (the script defines no --max_train_samples): the "
                "whole data set is still loaded and prepared")
    _sequence(rw, data, source, reading)
    for kind, name, hub in INPUTS:
        found = data.find(name) or knobs.find(name)
        if found is not None and found.known:
            rw.reads(kind, found.value, found.where, hub=hub)


def _reaches(rw: Rewrite, data: Knobs, reading: reads.Reading, name: str) -> bool:
    """Whether the script reads data knob ``name`` from where ``data`` writes it: a config
    copy it parses, an option or parsed field, or a flag the command already passes to a
    parser; else it is reported as not applied."""
    if isinstance(data, Keys) or reading.accepts(name):
        return True
    if data.find(name) is not None and (reading.argv or reading.unknown):
        return True  # the command as written passes it to the script's parser
    rw.unapplied(name, UNCHECKED if reading.unknown else BUILT_IN_CODE)
    return False


def _off(rw: Rewrite, knobs: Knobs, name: str) -> None:
    found = knobs.find(name)
    if found is None or (found.value or "true").lower() in ("false", "0", "no"):
        return
    if isinstance(knobs, Flags):
        drop(rw, knobs, name, base.NO_EVAL)
    else:
        tune(rw, knobs, name, False, base.NO_EVAL)


def _sequence(rw: Rewrite, knobs: Knobs, source: str, reading: reads.Reading) -> None:
    seq = rw.settings.seq_len
    present = [n for n in SEQUENCE_KNOBS if knobs.find(n) is not None]
    for name in present:
        if _reaches(rw, knobs, reading, name):
            tune(rw, knobs, name, seq, base.SEQUENCE, keep_if=smaller(seq))
    if present:
        return
    defined = next((n for n in SEQUENCE_KNOBS if defines(source, n)), None)
    if defined is None:
        rw.lack("no sequence-length knob found: sequences keep the length the script picks")
    elif not smaller(seq)(reads.field_default(source, defined)) and _reaches(
            rw, knobs, reading, defined):  # a default already short stays
        tune(rw, knobs, defined, seq, base.SEQUENCE)


def _config_file(rw: Rewrite, reading: reads.Reading) -> tuple[Path, dict[str, object]] | None:
    """The one ``.yaml``/``.json`` argument a script parses with HfArgumentParser (or reads
    from ``sys.argv`` its own way)."""
    items = rw.args.items
    if len(items) != 1 or not items[0].known or not items[0].text.endswith(
            (".yaml", ".yml", ".json")) or not (reading.file_arg or reading.unknown):
        return None
    path = rw.resolve(items[0].text)
    data = configs.load(path)
    if data is None:
        rw.lack(f"{items[0].text} cannot be read here: its knobs are left as they are")
        return None
    rw.reads("config", items[0].text, "the script's config file")
    return path, data

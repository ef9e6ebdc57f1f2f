"""PyTorch Lightning through ``LightningCLI`` (``python main.py fit --trainer.max_epochs 10
--config cfg.yaml``): Trainer and data-module flags on the command line, which jsonargparse
lets override any key of a ``--config`` file, so every change is a flag."""

from __future__ import annotations

from rankdebug.smoke import base, configs, ranks
from rankdebug.smoke.context import Rewrite, as_int, smaller
from rankdebug.smoke.knobs import Flags, Keys, Layered, tune

NAME = "lightning"
PACKAGES: tuple[str, ...] = ("lightning",)


def detect(rw: Rewrite) -> bool:
    if any(a.text.startswith("--trainer.") for a in rw.args.items if a.known):
        return True
    return "LightningCLI" in (rw.source or "")


def parallel(rw: Rewrite) -> int:
    return 1


def _knobs(rw: Rewrite) -> Layered:
    data: dict[str, object] = {}
    labels = []
    for i, arg in enumerate(rw.args.items):
        if arg.text in ("--config", "-c") and i + 1 < len(rw.args.items):
            label = rw.args.items[i + 1].text
        elif arg.text.startswith("--config="):
            label = arg.text.partition("=")[2]
        else:
            continue
        labels.append(label)
        rw.reads("config", label, "--config")
        loaded = configs.load(rw.resolve(label))
        for section, values in (loaded or {}).items():
            if isinstance(values, dict) and isinstance(data.get(section), dict):
                data[section] = {**data[section], **values}  # type: ignore[dict-item]
            else:
                data[section] = values
    keys = Keys(data, " + ".join(labels)) if labels else None
    return Layered(Flags(rw.args, dashes=False), keys, write_keys=False)


def rewrite(rw: Rewrite) -> None:
    source = rw.source or ""
    rw.need("pytorch_lightning" if "pytorch_lightning" in source and "import lightning"
            not in source else "lightning")
    knobs = _knobs(rw)
    steps = rw.settings.steps
    tune(rw, knobs, "trainer.max_steps", steps, base.steps_why(steps))
    tune(rw, knobs, "trainer.limit_val_batches", 0, base.NO_EVAL)
    tune(rw, knobs, "trainer.num_sanity_val_steps", 0, base.NO_EVAL)
    tune(rw, knobs, "trainer.logger", False, base.NO_REMOTE)
    tune(rw, knobs, "trainer.enable_checkpointing", False, base.NO_SAVE)
    tune(rw, knobs, "trainer.accumulate_grad_batches", 1, base.ACCUMULATION, present_only=True)
    per_node = rw.settings.nproc or ranks.DEFAULT_PER_NODE
    devices = knobs.find("trainer.devices")
    if devices is not None and ((as_int(devices.value) or 0) > per_node or devices.value in (
            "auto", "-1")):
        tune(rw, knobs, "trainer.devices", per_node,
             f"{per_node} devices: every collective still crosses ranks")
    tune(rw, knobs, "trainer.num_nodes", 1, ranks.NODES_WHY, present_only=True)
    tune(rw, knobs, "data.batch_size", 1, base.BATCH, present_only=True)
    tune(rw, knobs, "data.num_workers", 0, base.WORKERS, present_only=True,
         keep_if=smaller(0))

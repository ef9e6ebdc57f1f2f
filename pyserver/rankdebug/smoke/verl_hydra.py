"""verl (``python3 -m verl.trainer.main_ppo key=value ...``): Hydra overrides on the command
line, the keys of verl's ``ppo_trainer.yaml``. The DEBUG copy the verl write-up describes
(shared/seeds/001): batch 4 -> 1, prompt 10240 -> 512, response 512 -> 64, epochs 20 -> 1,
``enforce_eager=True``, ``load_format=safetensors``, a lower ``gpu_memory_utilization``.

Every change is an override (Hydra merges the last ``key=value``); a ``--config-path`` /
``--config-name`` YAML, when readable, gives the values the overrides replace."""

from __future__ import annotations

from typing import Any

from rankdebug.smoke import base, ranks
from rankdebug.smoke.context import Rewrite, as_int, smaller
from rankdebug.smoke.knobs import Overrides, tune

NAME = "verl"
PACKAGES: tuple[str, ...] = ("verl",)
PROMPT, RESPONSE, MEMORY = 512, 64, 0.3
ROLLOUT = "actor_rollout_ref.rollout"
# Estimators that compare samples of one prompt: they need a group of at least 2.
GROUP_ESTIMATORS = ("grpo", "rloo", "reinforce_plus_plus_baseline", "opo", "grpo_passk")
REMOTE_LOGGERS = ("wandb", "swanlab", "mlflow", "tensorboard", "clearml", "vemlp_wandb")
PARALLEL_KEYS = (
    (f"{ROLLOUT}.tensor_model_parallel_size",),
    ("actor_rollout_ref.actor.megatron.tensor_model_parallel_size",
     "actor_rollout_ref.actor.megatron.pipeline_model_parallel_size",
     "actor_rollout_ref.actor.megatron.context_parallel_size"),
    ("actor_rollout_ref.actor.ulysses_sequence_parallel_size",),
)


def detect(rw: Rewrite) -> bool:
    module = rw.entry_module() or ""
    if module.startswith(("verl.", "recipe.")):
        return True
    keys = rw.args.overrides()
    return any(k.startswith(("actor_rollout_ref.", "trainer.n_gpus_per_node")) for k in keys)


def _knobs(rw: Rewrite) -> Overrides:
    path_hit = rw.args.find(("--config-path", "-cp"))
    name_hit = rw.args.find(("--config-name", "-cn"))
    data: dict[str, Any] | None = None
    label = ""
    if path_hit and name_hit and path_hit.value and name_hit.value:
        name = name_hit.value if name_hit.value.endswith(".yaml") else f"{name_hit.value}.yaml"
        label = f"{path_hit.value}/{name}"
        data = rw.config(label)
    return Overrides(rw.args, data, label)


def parallel(rw: Rewrite) -> int:
    knobs = _knobs(rw)
    need = 1
    for group in PARALLEL_KEYS:
        product = 1
        for key in group:
            found = knobs.find(key)
            product *= max(1, as_int(found.value) or 1) if found else 1
        need = max(need, product)
    return need


def rewrite(rw: Rewrite) -> None:
    rw.need(*PACKAGES)
    knobs = _knobs(rw)
    steps, world = rw.settings.steps, rw.world
    tune(rw, knobs, "trainer.total_epochs", 1, "one epoch", keep_if=smaller(1))
    tune(rw, knobs, "trainer.total_training_steps", steps, base.steps_why(steps))
    tune(rw, knobs, "data.train_batch_size", world,
         f"the smallest batch the ranks accept: one prompt for each of {world} ranks",
         keep_if=smaller(world))
    tune(rw, knobs, "data.max_prompt_length", PROMPT, base.SEQUENCE, keep_if=smaller(PROMPT))
    tune(rw, knobs, "data.max_response_length", RESPONSE, base.SEQUENCE,
         keep_if=smaller(RESPONSE))
    _batches(rw, knobs, world)
    _rollout(rw, knobs)
    if rw.per_node is not None:
        tune(rw, knobs, "trainer.n_gpus_per_node", rw.per_node, ranks.per_node_why(rw))
        tune(rw, knobs, "trainer.nnodes", rw.nodes, ranks.NODES_WHY, present_only=rw.nodes == 1)
    _logger(rw, knobs)
    tune(rw, knobs, "trainer.save_freq", -1, base.NO_SAVE)
    tune(rw, knobs, "trainer.test_freq", -1, base.NO_EVAL)
    tune(rw, knobs, "trainer.val_before_train", False, base.NO_EVAL)
    truncation = knobs.find("data.truncation")
    if truncation is not None and (truncation.value or "").strip("'\"") == "error":
        rw.note(f"data.truncation=error: a prompt longer than {PROMPT} tokens stops the smoke "
                "run (data.filter_overlong_prompts=True drops such prompts)")
    _inputs(rw, knobs)


def _batches(rw: Rewrite, knobs: Overrides, world: int) -> None:
    """Mini batches of one prompt per rank, micro batches of one sample."""
    for key in list(rw.args.overrides()) + _config_keys(knobs):
        leaf = key.rsplit(".", 1)[-1]
        if leaf.endswith("micro_batch_size_per_gpu"):
            tune(rw, knobs, key, 1, base.BATCH, keep_if=smaller(1))
        elif leaf == "ppo_mini_batch_size":
            tune(rw, knobs, key, world, f"one prompt per rank ({world} ranks)",
                 keep_if=smaller(world))
        elif leaf.endswith("micro_batch_size"):
            tune(rw, knobs, key, world, f"one sample per rank ({world} ranks)",
                 keep_if=smaller(world))


def _config_keys(knobs: Overrides) -> list[str]:
    if knobs.config is None:
        return []
    out: list[str] = []

    def walk(node: object, prefix: str) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, f"{prefix}{k}.")
        elif "batch_size" in prefix and isinstance(node, int):
            out.append(prefix[:-1])

    walk(knobs.config, "")
    return out


def _rollout(rw: Rewrite, knobs: Overrides) -> None:
    n = knobs.find(f"{ROLLOUT}.n")
    if n is not None and (as_int(n.value) or 1) > 1:
        found = knobs.find("algorithm.adv_estimator")
        group = bool(found and (found.value or "").strip("'\"") in GROUP_ESTIMATORS)
        tune(rw, knobs, f"{ROLLOUT}.n", 2 if group else 1,
             "two samples per prompt: the estimator compares a group" if group
             else "one sample per prompt", keep_if=smaller(2 if group else 1))
    tune(rw, knobs, f"{ROLLOUT}.enforce_eager", True,
         "no CUDA graph capture: the engine starts in seconds")
    fmt = knobs.find(f"{ROLLOUT}.load_format")
    if fmt is None or not (fmt.value or "").startswith("dummy"):
        tune(rw, knobs, f"{ROLLOUT}.load_format", "safetensors",
             "the rollout engine loads the weights straight from safetensors")
    tune(rw, knobs, f"{ROLLOUT}.gpu_memory_utilization", MEMORY,
         "a small KV cache: the engine starts faster and leaves room for the actor",
         keep_if=smaller(MEMORY))
    name = knobs.find(f"{ROLLOUT}.name")
    if name is not None and name.value in ("vllm", "sglang"):
        rw.need(name.value)


def _logger(rw: Rewrite, knobs: Overrides) -> None:
    found = knobs.find("trainer.logger")
    value = found.value if found else None
    if value is not None and not any(r in value for r in REMOTE_LOGGERS):
        return
    tune(rw, knobs, "trainer.logger", '["console"]', base.NO_REMOTE)


def _inputs(rw: Rewrite, knobs: Overrides) -> None:
    for kind, key, hub in (("data", "data.train_files", False),
                           ("data", "data.val_files", False),
                           ("model", "actor_rollout_ref.model.path", True),
                           ("model", "critic.model.path", True),
                           ("model", "reward_model.model.path", True)):
        found = knobs.find(key)
        if found is None or not found.known or found.value is None:
            continue
        for value in found.value.strip("[]").split(","):
            rw.reads(kind, value.strip().strip("'\""), found.where, hub=hub)

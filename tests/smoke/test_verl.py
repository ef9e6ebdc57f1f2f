"""verl: Hydra overrides on the command line, and knobs in a --config-name YAML."""

from __future__ import annotations

from pathlib import Path

from smoke_helpers import changed, of_file, unchanged, write

# volcengine/verl examples/ppo_trainer/run_deepseek7b_llm.sh @ 3bf8cd518cfba9d1885d5148d6217
PPO_DEEPSEEK7B = r"""
set -x

python3 -m verl.trainer.main_ppo \
    algorithm.adv_estimator=gae \
    data.train_files=$HOME/data/gsm8k/train.parquet \
    data.val_files=$HOME/data/gsm8k/test.parquet \
    data.train_batch_size=1024 \
    data.max_prompt_length=512 \
    data.max_response_length=512 \
    data.filter_overlong_prompts=True \
    data.truncation='error' \
    actor_rollout_ref.model.path=deepseek-ai/deepseek-llm-7b-chat \
    actor_rollout_ref.actor.optim.lr=1e-6 \
    actor_rollout_ref.model.use_remove_padding=True \
    actor_rollout_ref.actor.ppo_mini_batch_size=256 \
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=16 \
    actor_rollout_ref.actor.fsdp_config.param_offload=False \
    actor_rollout_ref.actor.fsdp_config.optimizer_offload=False \
    actor_rollout_ref.actor.use_kl_loss=False \
    actor_rollout_ref.model.enable_gradient_checkpointing=True \
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=32 \
    actor_rollout_ref.rollout.tensor_model_parallel_size=4 \
    actor_rollout_ref.rollout.name=vllm \
    actor_rollout_ref.rollout.gpu_memory_utilization=0.4 \
    actor_rollout_ref.rollout.quantization=torchao \
    actor_rollout_ref.rollout.quantization_config_file=torchao_config.json \
    critic.optim.lr=1e-5 \
    critic.model.use_remove_padding=True \
    critic.model.path=deepseek-ai/deepseek-llm-7b-chat \
    critic.model.enable_gradient_checkpointing=True \
    critic.ppo_micro_batch_size_per_gpu=32 \
    critic.model.fsdp_config.param_offload=False \
    critic.model.fsdp_config.optimizer_offload=False \
    algorithm.use_kl_in_reward=False \
    trainer.critic_warmup=0 \
    trainer.logger='["console","wandb"]' \
    trainer.project_name='verl_example_gsm8k' \
    trainer.experiment_name='deepseek_llm_7b_function_rm' \
    trainer.n_gpus_per_node=8 \
    trainer.nnodes=1 \
    trainer.save_freq=20 \
    trainer.test_freq=1 \
    trainer.use_legacy_worker_impl=auto \
    trainer.total_epochs=15 $@
"""

# volcengine/verl examples/grpo_trainer/run_qwen2-7b.sh @ 3f388066192c138aa19338f49accbe8bb9f
GRPO_QWEN2_7B = r"""
set -x

python3 -m verl.trainer.main_ppo \
    algorithm.adv_estimator=grpo \
    data.train_files=$HOME/data/gsm8k/train.parquet \
    data.val_files=$HOME/data/gsm8k/test.parquet \
    data.train_batch_size=1024 \
    data.max_prompt_length=512 \
    data.max_response_length=1024 \
    actor_rollout_ref.model.path=Qwen/Qwen2-7B-Instruct \
    actor_rollout_ref.actor.ppo_mini_batch_size=256 \
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=40 \
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=40 \
    actor_rollout_ref.rollout.tensor_model_parallel_size=2 \
    actor_rollout_ref.rollout.name=vllm \
    actor_rollout_ref.rollout.gpu_memory_utilization=0.6 \
    actor_rollout_ref.rollout.n=5 \
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=40 \
    trainer.logger=['console','wandb'] \
    trainer.n_gpus_per_node=8 \
    trainer.nnodes=1 \
    trainer.save_freq=20 \
    trainer.test_freq=5 \
    trainer.total_epochs=15 $@
"""

# volcengine/verl examples/sglang_multiturn/config/gsm8k_multiturn_grpo.yaml @ ed070cc760a8a
MULTITURN_YAML = """
hydra:
  searchpath:
    - file://verl/trainer/config

defaults:
  - ppo_trainer
  - _self_

data:
  max_prompt_length: 1024
  max_response_length: 1024
  train_batch_size: 256
  return_raw_chat: True

actor_rollout_ref:
  hybrid_engine: True
  rollout:
    name: sglang
    multi_turn:
      enable: True
      max_assistant_turns: 5
      format: qwen
"""

# The head of examples/sglang_multiturn/run_qwen2.5-3b_gsm8k_multiturn.sh (@ 0719d1f2ac263fab),
# with the knobs the YAML holds left to it.
MULTITURN_RUN = r"""
PROJECT_DIR="$(pwd)"
CONFIG_PATH="examples/sglang_multiturn/config"

python3 -m verl.trainer.main_ppo \
    --config-path="$CONFIG_PATH" \
    --config-name='gsm8k_multiturn_grpo' \
    algorithm.adv_estimator=grpo \
    actor_rollout_ref.model.path=Qwen/Qwen2.5-3B-Instruct \
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=40 \
    actor_rollout_ref.rollout.tensor_model_parallel_size=2 \
    actor_rollout_ref.rollout.n=16 \
    trainer.n_gpus_per_node=8 \
    trainer.total_epochs=15 $@
"""


def _overrides(argv: list[str]) -> dict[str, str]:
    return dict(w.split("=", 1) for w in argv if "=" in w and not w.startswith("-"))


def test_the_ppo_example_shrinks_as_the_write_up_does(tmp_path: Path) -> None:
    script = write(tmp_path / "run_deepseek7b_llm.sh", PPO_DEEPSEEK7B)
    result = of_file(script, 5, tmp_path)
    assert result.frameworks == ["verl"]
    o = _overrides(result.argv)
    # The shrink of shared/seeds/001: epochs -> 1, response -> 64, eager, safetensors.
    assert o["trainer.total_epochs"] == "1" and o["trainer.total_training_steps"] == "3"
    assert o["data.max_response_length"] == "64"
    assert o["data.max_prompt_length"] == "512"  # already short: left alone
    unchanged(result, "data.max_prompt_length")
    assert o["actor_rollout_ref.rollout.enforce_eager"] == "True"
    assert o["actor_rollout_ref.rollout.load_format"] == "safetensors"
    assert o["actor_rollout_ref.rollout.gpu_memory_utilization"] == "0.3"
    # Rollout tensor parallel 4 keeps 4 ranks: one prompt per rank, one sample per micro-batch.
    assert o["trainer.n_gpus_per_node"] == "4"
    assert "model parallelism" in changed(result, "trainer.n_gpus_per_node").why
    assert o["data.train_batch_size"] == "4"
    assert o["actor_rollout_ref.actor.ppo_mini_batch_size"] == "4"
    assert o["actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu"] == "1"
    assert o["critic.ppo_micro_batch_size_per_gpu"] == "1"
    assert o["trainer.logger"] == '["console"]'
    assert (o["trainer.save_freq"], o["trainer.test_freq"]) == ("-1", "-1")
    assert o["trainer.val_before_train"] == "False"
    # $HOME is known (from the environment); the overrides keep their place.
    assert o["data.train_files"] == "/home/user/data/gsm8k/train.parquet"
    epochs = changed(result, "trainer.total_epochs")
    assert (epochs.old, epochs.where) == ("15", "trainer.total_epochs= (command line)")
    assert any("data.truncation=error" in n for n in result.notes)
    assert "verl" in result.packages and "vllm" in result.packages


def test_grpo_keeps_a_group_of_two_samples(tmp_path: Path) -> None:
    script = write(tmp_path / "run_qwen2-7b.sh", GRPO_QWEN2_7B)
    result = of_file(script, 3, tmp_path)
    o = _overrides(result.argv)
    n = changed(result, "actor_rollout_ref.rollout.n")
    assert (n.old, n.new) == ("5", "2") and "group" in n.why
    assert o["trainer.n_gpus_per_node"] == "2"  # tensor parallel 2: two ranks are enough
    assert o["data.train_batch_size"] == "2"
    assert o["trainer.logger"] == '["console"]'
    assert o["actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu"] == "1"


def test_knobs_in_the_config_yaml_are_read_and_overridden(tmp_path: Path) -> None:
    before = write(tmp_path / "examples/sglang_multiturn/config/gsm8k_multiturn_grpo.yaml",
                   MULTITURN_YAML).read_bytes()
    script = write(tmp_path / "run.sh", MULTITURN_RUN)
    result = of_file(script, 4, tmp_path)
    label = "examples/sglang_multiturn/config/gsm8k_multiturn_grpo.yaml"
    prompt = changed(result, "data.max_prompt_length")
    assert (prompt.old, prompt.new) == ("1024", "512")
    assert prompt.where == f"{label}: data.max_prompt_length"
    batch = changed(result, "data.train_batch_size")
    assert (batch.old, batch.new, batch.where) == ("256", "2",
                                                   f"{label}: data.train_batch_size")
    assert "data.max_prompt_length=512" in result.argv
    assert result.files == []
    assert (tmp_path / label).read_bytes() == before


def test_a_missing_estimator_group_is_not_guessed(tmp_path: Path) -> None:
    # Without an estimator that compares samples, one sample per prompt is enough.
    script = write(tmp_path / "run.sh", GRPO_QWEN2_7B.replace("algorithm.adv_estimator=grpo \\\n",
                                                              ""))
    result = of_file(script, 3, tmp_path)
    assert changed(result, "actor_rollout_ref.rollout.n").new == "1"

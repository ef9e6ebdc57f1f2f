set -x

python3 -m verl.trainer.main_ppo \
    data.train_files=data/gsm8k/train.parquet \
    data.val_files=data/gsm8k/test.parquet \
    actor_rollout_ref.model.path=google/gemma-2-2b-it \
    actor_rollout_ref.rollout.name=vllm \
    critic.model.path=google/gemma-2-2b-it \
    trainer.project_name='verl_example' \
    trainer.experiment_name='gemma2b_function_rm' \
    trainer.n_gpus_per_node=2 \
    trainer.total_epochs=15 $@

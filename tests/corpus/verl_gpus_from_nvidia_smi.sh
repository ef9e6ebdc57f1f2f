#!/bin/bash
set -xeuo pipefail
N_GPUS=$(nvidia-smi --list-gpus | wc -l)

python3 -m verl.trainer.main_ppo \
    algorithm.adv_estimator=gae \
    actor_rollout_ref.model.path=Qwen/Qwen2.5-0.5B-Instruct \
    trainer.n_gpus_per_node=${N_GPUS} \
    trainer.nnodes=1 \
    trainer.total_training_steps=2

#!/usr/bin/env bash
# Submit from the Ray head node once the cluster is up.
NNODES=${NNODES:-2}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}
MODEL_PATH=${MODEL_PATH:-Qwen/Qwen2.5-7B-Instruct}

python3 -m verl.trainer.main_ppo \
    algorithm.adv_estimator=grpo \
    actor_rollout_ref.model.path="${MODEL_PATH}" \
    trainer.nnodes="${NNODES}" \
    trainer.n_gpus_per_node="${GPUS_PER_NODE}" \
    trainer.project_name=verl_grpo_multinode

#!/bin/bash
dir=`pwd`
###############################################################################
### Main configs
seq_len=2048
model_size=0.125
num_layers=12
hidden_size=768
num_attn_heads=12
global_batch_size=256
lr=6.0e-4
min_lr=1.0e-6
###############################################################################
### Parallelism configs
## Number of GPUs per node, detected at run time
num_gpus_pernode=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
num_node=1
num_gpus=$(( ${num_gpus_pernode} * ${num_node} ))
mp_size=1
pp_size=1
###############################################################################
megatron_options=" \
    --tensor-model-parallel-size ${mp_size} \
    --pipeline-model-parallel-size ${pp_size} \
    --num-layers ${num_layers} \
    --hidden-size ${hidden_size} \
    --num-attention-heads ${num_attn_heads} \
    --seq-length ${seq_len} \
    --global-batch-size ${global_batch_size} \
    --lr ${lr} \
    --min-lr ${min_lr}"

deepspeed_options=" \
    --deepspeed \
    --deepspeed_config ds_config_gpt.json \
    --zero-stage 0"

deepspeed --num_nodes ${num_node} --num_gpus ${num_gpus_pernode} ${dir}/../../pretrain_gpt.py ${megatron_options} ${deepspeed_options} &>> logs/gpt_${model_size}B.log

#!/bin/bash
# Evaluation on four devices of one machine through mindformers' launcher script.
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3

bash scripts/msrun_launcher.sh "toolkit/benchmarks/eval_with_harness.py \
    --model mf \
    --model_args pretrained=MODEL_DIR,use_parallel=True,tp=1,dp=4 \
    --tasks TASKS \
    --batch_size 4" 4

#!/bin/bash
# run on the second of two 8-device servers
export MS_ENABLE_LCCL=off
msrun --worker_num=16 --local_worker_num=8 \
      --master_addr=192.168.1.1 --master_port=8118 \
      --node_rank=1 --log_dir=msrun_log --join=True --cluster_time_out=300 \
      run_mindformer.py --config configs/llama2/pretrain_llama2_7b.yaml --run_mode train

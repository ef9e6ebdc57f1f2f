#!/bin/bash
# Copyright 2024 Huawei Technologies Co., Ltd

port=8118
PROJECT_DIR=$(cd "$(dirname "$0")" || exit; pwd)
log_path="msrun_log"

echo "in project_dir: $PROJECT_DIR"

rm -rf "${log_path}"
mkdir "${log_path}"
echo "train start, log path: ${log_path}"

# 计算设备数量
IFS=',' read -r -a devices <<< "$ASCEND_RT_VISIBLE_DEVICES"
work_num=${#devices[@]}

config_path=$1

if [ -z "$config_path" ]; then
    config_path="pretrain_llama2.yaml"
fi

msrun --worker_num "$work_num" --local_worker_num="$work_num" --master_port=$port --log_dir="$log_path" --join=True --cluster_time_out=300 train.py --config_path="${config_path}"

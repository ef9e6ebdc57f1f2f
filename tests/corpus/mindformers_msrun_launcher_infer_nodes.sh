#!/bin/bash
# Inference over two nodes of 8 devices; run on each node with its id, its own IP, the
# master's IP and the mindformers checkout.
base_path=$(cd "$(dirname $0)"; pwd)

node_id=$1
cur_ip=$2
master_ip=$3
mf_path=$4

export HCCL_IF_IP=${cur_ip}
export PYTHONPATH=${mf_path}:${PYTHONPATH}

bash ${mf_path}/scripts/msrun_launcher.sh "ds_infer_a16w4.py --yaml_file ${mf_path}/research/deepseek3/deepseek_r1_671b/predict_deepseek_r1_671b.yaml" 16 8 ${master_ip} 8432 ${node_id} output/msrun_log False 300

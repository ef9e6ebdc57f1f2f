#!/bin/bash
# Two 8-GPU workers listed in hostfiles/ds_hostfile; the runner ssh-es into each.
export NCCL_IB_DISABLE=0
export NCCL_SOCKET_IFNAME=eth0

deepspeed --hostfile=hostfiles/ds_hostfile \
    --master_addr worker-1 --master_port 29500 \
    train.py \
    --deepspeed \
    --deepspeed_config ds_config.json --epochs=1 --batch_size 64

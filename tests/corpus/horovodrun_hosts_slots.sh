#!/bin/bash
# Horovod's own walk-through: one machine with 4 GPUs, then 4 machines with 4 GPUs each,
# then the hosts read from a hostfile (`host slots=N` lines).
horovodrun -np 4 -H localhost:4 python train.py
horovodrun -np 16 -H server1:4,server2:4,server3:4,server4:4 python train.py
horovodrun -np 6 -hostfile hostfiles/horovod_hosts python train.py --epochs 90

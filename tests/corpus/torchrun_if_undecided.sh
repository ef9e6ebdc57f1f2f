#!/bin/bash
if [ -f /etc/multinode ]; then
    NNODES=2
else
    NNODES=1
fi

torchrun --nnodes $NNODES --nproc_per_node 4 train.py

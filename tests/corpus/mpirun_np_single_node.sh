#!/bin/bash
# one node, four ranks, OpenMPI
mpirun -np 4 --allow-run-as-root \
    -x NCCL_DEBUG=INFO -x LD_LIBRARY_PATH \
    -bind-to none -map-by slot \
    python train.py --epochs 10

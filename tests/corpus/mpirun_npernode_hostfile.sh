#!/bin/bash
NP=8
PER_NODE=4
mpirun -np ${NP} -N ${PER_NODE} --hostfile hostfiles/mpi_hostfile \
    python3 train.py --backend nccl

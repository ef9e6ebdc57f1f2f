#!/bin/bash
# torchrun reads PET_<OPTION> environment variables as option defaults
PET_NPROC_PER_NODE=4 PET_NNODES=1 torchrun train.py --amp

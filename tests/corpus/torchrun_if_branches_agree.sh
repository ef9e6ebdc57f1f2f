#!/bin/bash
if [ -n "$SLURM_JOB_ID" ]; then
    echo "running under slurm job $SLURM_JOB_ID"
    NPROC=8
else
    echo "running interactively"
    NPROC=8
fi

torchrun --nproc_per_node $NPROC main.py --arch vit_b_16

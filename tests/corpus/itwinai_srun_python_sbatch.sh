#!/bin/bash

# job: two nodes, four tasks (one per GPU) on each
#SBATCH --job-name=Torch_HVD_tutorial-0
#SBATCH --output=job-hvd.out
#SBATCH --time=00:15:00
#SBATCH --partition=batch
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=4
#SBATCH --cpus-per-task=8
#SBATCH --gpus-per-node=4

export SRUN_CPUS_PER_TASK=${SLURM_CPUS_PER_TASK}
export OMP_NUM_THREADS=1
if [ "$SLURM_CPUS_PER_TASK" -gt 0 ] ; then
  export OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK
fi
export CUDA_VISIBLE_DEVICES="0,1,2,3"

TRAINING_CMD="train.py -s horovod"

srun --cpu-bind=none python -u $TRAINING_CMD

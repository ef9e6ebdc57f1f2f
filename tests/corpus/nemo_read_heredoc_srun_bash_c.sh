#!/bin/bash
#SBATCH -N 1
#SBATCH --ntasks-per-node=8
#SBATCH --gpus-per-node=8
#SBATCH --time=4:00:00

CONTAINER="nvcr.io/nvidia/nemo:24.05"
RESULTS=results/hyena
CODE=code/safari
MOUNTS="--container-mounts=$CODE:/code,$RESULTS:/results"

OUTFILE="${RESULTS}/slurm-%j-%n.out"
ERRFILE="${RESULTS}/error-%j-%n.out"

read -r -d '' cmd <<EOF
echo "*******STARTING********" \
&& echo "---------------" \
&& export WANDB_API_KEY=${WANDB} \
&& echo "Starting training" \
&& cd /code \
&& python -m train experiment=synthetics/associative_recall/hyena-131k-30vs.yaml
EOF

srun -o $OUTFILE -e $ERRFILE --container-image="$CONTAINER" $MOUNTS bash -c "${cmd}"
set +x

#!/bin/bash
STAGE=${STAGE:-sft}
if [ "$STAGE" = "sft" ]; then
    torchrun --nproc_per_node 8 sft.py --epochs 3
elif [ "$STAGE" = "dpo" ]; then
    torchrun --nproc_per_node 4 dpo.py --beta 0.1
fi

#!/bin/bash
# mmdetection's README: train with 8 GPUs through its wrapper
bash tools/dist_train.sh configs/faster_rcnn/faster-rcnn_r50_fpn_1x_coco.py 8 --auto-scale-lr

# timm's README: the wrapper runs train.py from the current folder
cd timm
./distributed_train.sh 4 --data-dir /imagenet --model seresnet34 --sched cosine --epochs 150 --warmup-epochs 5 --lr 0.4 --reprob 0.5 --remode pixel --batch-size 256 --amp -j 4
cd ..

# NNODES and NODE_RANK read by the wrapper from the environment
NNODES=2 NODE_RANK=1 PORT=29600 MASTER_ADDR=10.0.0.1 bash tools/dist_train.sh cfg.py 4

# a wrapper that is not here
sh scripts/run.sh 8 --lr 0.1
bash ./no_such_dir/dist_train.sh cfg.py 8

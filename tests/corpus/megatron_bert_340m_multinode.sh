#!/bin/bash

# Runs the "340M" parameter model (Bert - Large)

export CUDA_DEVICE_MAX_CONNECTIONS=1

GPUS_PER_NODE=8
# Change for multinode config
MASTER_ADDR=${MASTER_ADDR:-"10.0.0.1"}
MASTER_PORT=${MASTER_PORT:-6000}
NUM_NODES=${NUM_NODES:-2}
NODE_RANK=${NODE_RANK:-1}
WORLD_SIZE=$(($GPUS_PER_NODE*$NUM_NODES))

CHECKPOINT_PATH=$1 #<Specify path>
VOCAB_FILE=data/bert-large-uncased-vocab.txt
DATA_PATH=data/my-bert_00_text_sentence

DISTRIBUTED_ARGS="
    --nproc_per_node $GPUS_PER_NODE
    --nnodes $NUM_NODES
    --node_rank $NODE_RANK
    --master_addr $MASTER_ADDR
    --master_port $MASTER_PORT
"

BERT_MODEL_ARGS="
    --num-layers 24
    --hidden-size 1024
    --num-attention-heads 16
    --seq-length 512
"

DATA_ARGS="--data-path $DATA_PATH --vocab-file $VOCAB_FILE --split 949,50,1"

torchrun $DISTRIBUTED_ARGS pretrain_bert.py \
    $BERT_MODEL_ARGS \
    $DATA_ARGS \
    --save $CHECKPOINT_PATH \
    --load $CHECKPOINT_PATH

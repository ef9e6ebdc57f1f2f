"""Megatron-LM / MindSpeed flags: iterations, batches, sequence length, no eval or save, and
the ranks tensor and pipeline parallelism need."""

from __future__ import annotations

from pathlib import Path

from smoke_helpers import changed, of_command, of_file, unchanged, write

# NVIDIA/Megatron-LM examples/gpt3/train_gpt3_175b_distributed.sh @ 4b36c6c4c22072273369457ba
GPT3_175B = r"""
#!/bin/bash
# Runs the "175B" parameter model
export CUDA_DEVICE_MAX_CONNECTIONS=1
GPUS_PER_NODE=8
# Change for multinode config
MASTER_ADDR=localhost
MASTER_PORT=6000
NUM_NODES=1
NODE_RANK=0
WORLD_SIZE=$(($GPUS_PER_NODE*$NUM_NODES))
CHECKPOINT_PATH=$1 #<Specify path>
TENSORBOARD_LOGS_PATH=$2 #<Specify path>
VOCAB_FILE=$3 #<Specify path to file>/gpt2-vocab.json
MERGE_FILE=$4 #<Specify path to file>/gpt2-merges.txt
DATA_PATH=$5 #<Specify path and file prefix>_text_document
DISTRIBUTED_ARGS=(
    --nproc_per_node $GPUS_PER_NODE
    --nnodes $NUM_NODES
    --master_addr $MASTER_ADDR
    --master_port $MASTER_PORT
)
GPT_MODEL_ARGS=(
    --num-layers 8
    --hidden-size 256
    --num-attention-heads 8
    --seq-length 512
    --max-position-embeddings 512
)
TRAINING_ARGS=(
    --micro-batch-size 1
    --global-batch-size 64
    --train-iters 10
    --weight-decay 0.1
    --adam-beta1 0.9
    --adam-beta2 0.95
    --init-method-std 0.006
    --clip-grad 1.0
    --fp16
    --lr 6.0e-5
    --lr-decay-style cosine
    --min-lr 6.0e-6
    --lr-warmup-fraction .001
    --lr-decay-iters 430000
    --use-mcore-models
)
MODEL_PARALLEL_ARGS=(
    --tensor-model-parallel-size 2
    --pipeline-model-parallel-size 2
)
DATA_ARGS=(
    --data-path $DATA_PATH
    --vocab-file $VOCAB_FILE
    --merge-file $MERGE_FILE
    --split 949,50,1
)
EVAL_AND_LOGGING_ARGS=(
    --log-interval 1
    --save-interval 10
    --eval-interval 10
    --save $CHECKPOINT_PATH
    --load $CHECKPOINT_PATH
    --eval-iters 10
    --tensorboard-dir $TENSORBOARD_LOGS_PATH
)
torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py \
    ${GPT_MODEL_ARGS[@]} \
    ${TRAINING_ARGS[@]} \
    ${MODEL_PARALLEL_ARGS[@]} \
    ${DATA_ARGS[@]} \
    ${EVAL_AND_LOGGING_ARGS[@]}
"""
LINE = GPT3_175B.lstrip("\n").splitlines().index(
    "torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py \\") + 1


def test_the_175b_example_keeps_tensor_times_pipeline_ranks(tmp_path: Path) -> None:
    result = of_file(write(tmp_path / "train.sh", GPT3_175B), LINE, tmp_path)
    assert result.frameworks == ["megatron"]
    ranks = changed(result, "--nproc_per_node")
    assert (ranks.old, ranks.new) == ("8", "4") and "model parallelism" in ranks.why
    assert (changed(result, "--train-iters").old, changed(result, "--train-iters").new) == (
        "10", "3")
    assert changed(result, "--global-batch-size").new == "1"  # 4 ranks / (TP 2 x PP 2)
    assert changed(result, "--seq-length").new == "128"
    unchanged(result, "--max-position-embeddings")  # still >= the sequence length
    unchanged(result, "--micro-batch-size")  # already 1
    assert result.env == {"CUDA_DEVICE_MAX_CONNECTIONS": "1"}
    # $1..$5 are script arguments: the words holding them are kept, and said so.
    assert "${EVAL_AND_LOGGING_ARGS[@]}" in result.argv
    assert any("${EVAL_AND_LOGGING_ARGS[@]}" in n for n in result.notes)
    assert result.argv[-4:] == ["--eval-iters", "0", "--num-workers", "0"]


def test_known_paths_drop_saving_and_tensorboard(tmp_path: Path) -> None:
    script = GPT3_175B.replace("$1 #", "/ckpt #").replace("$2 #", "/tb #").replace(
        "$3 #", "vocab.json #").replace("$4 #", "merges.txt #").replace(
        "$5 #", "data/my-gpt2_text_document #")
    result = of_file(write(tmp_path / "train.sh", script), LINE, tmp_path)
    save = changed(result, "--save")
    assert (save.old, save.new) == ("/ckpt", None)
    assert changed(result, "--tensorboard-dir").new is None
    assert changed(result, "--eval-iters").old == "10"
    assert "--load" in result.argv  # reading a checkpoint is part of the job's shape
    assert {(i.kind, i.value) for i in result.inputs} >= {
        ("data-prefix", "data/my-gpt2_text_document"), ("tokenizer", "vocab.json")}


def test_sample_based_training_and_warmup(tmp_path: Path) -> None:
    result = of_command("torchrun --nproc_per_node 8 pretrain_gpt.py --train-samples 1000000 "
                        "--lr-warmup-samples 5000 --micro-batch-size 4 --global-batch-size 512 "
                        "--seq-length 4096 --rampup-batch-size 32 32 1000", tmp_path)
    assert changed(result, "--train-samples").new == "6"  # 3 steps x 2 data-parallel ranks
    assert changed(result, "--lr-warmup-samples").new == "5"
    assert changed(result, "--rampup-batch-size").new is None
    assert "1000" not in result.argv  # all three of its values went with it
    assert changed(result, "--global-batch-size").new == "2"


def test_tensor_parallel_larger_than_a_node_keeps_the_shape(tmp_path: Path) -> None:
    result = of_command("torchrun --nnodes 2 --nproc_per_node 4 pretrain_gpt.py "
                        "--tensor-model-parallel-size 8 --train-iters 100", tmp_path)
    assert result.plan["to"] == {"nnodes": 2, "nproc_per_node": 4, "world_size": 8}
    assert any("needs 8 ranks" in n for n in result.notes)

CUDA_VISIBLE_DEVICES=0,1,2,3 NCCL_DEBUG=INFO torchrun --nproc_per_node 4 \
    src/train.py --model_name llama31 --learning_rate 1e-4

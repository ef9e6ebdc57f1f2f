#!/bin/bash
# evaluate the last checkpoint while the next run trains
CKPT=out/ckpt.pt
python -m torch_example.eval --ckpt "$CKPT" --split val > eval.log 2>&1 &
python3 -u train.py config/train_gpt2.py --compile=False
wait

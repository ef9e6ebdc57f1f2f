#!/bin/bash
# the trainer is a compiled binary that reads RANK/WORLD_SIZE itself
torchrun --nproc_per_node 2 --no-python ./bin/trainer --steps 100 --log-every 10

#!/bin/bash
set -e
# let torchrun pick one worker per visible GPU
torchrun --standalone --nproc_per_node=auto -m my_project.train --cfg configs/base.yaml

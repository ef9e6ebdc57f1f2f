#!/bin/bash
# run the DeepSpeed launcher script directly
./helpers/launch_ds.sh \
    --epochs 3

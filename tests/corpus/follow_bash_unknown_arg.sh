#!/bin/bash
# NGPU comes from the caller's environment
bash helpers/train_inner.sh "$NGPU"

#!/bin/bash
set -e
bash helpers/train_inner.sh 4 1e-4

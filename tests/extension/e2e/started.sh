#!/usr/bin/env bash
# Fabric starts as many ranks as --devices says: not known before it runs.
python started_train.py --devices 2

#!/bin/bash
msrun --log_dir=msrun_log --join=True train.py --epochs 1

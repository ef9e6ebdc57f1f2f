#!/bin/bash
srun --nodes=2 --ntasks=8 --gpus-per-task=1 --cpu-bind=cores python main.py --epochs 90

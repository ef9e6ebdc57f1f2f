#!/bin/bash
# Verbatim from deepspeedai/DeepSpeedExamples (training/pipeline_parallelism/run.sh) at commit 45b4b7156c8794a3452a5a7d03dbd8d797068569; only this line is added.

deepspeed train.py --deepspeed_config=ds_config.json -p 2 --steps=200

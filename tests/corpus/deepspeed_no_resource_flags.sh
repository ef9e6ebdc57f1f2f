#!/bin/bash
# single machine, every GPU the machine has
deepspeed train.py --deepspeed --deepspeed_config ds_config.json

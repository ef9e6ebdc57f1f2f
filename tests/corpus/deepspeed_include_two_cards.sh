#!/bin/bash
deepspeed --include localhost:1,3 --master_port 29700 train.py --deepspeed_config ds.json

#!/usr/bin/env bash
# A verl-shaped Ray job: a driver and 3 actor ranks (RANK in each actor's runtime env).
python ray_trainer.py 3 5

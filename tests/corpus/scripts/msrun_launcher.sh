#!/bin/bash
# A stand-in for mindformers' scripts/msrun_launcher.sh (mindspore-lab/mindformers), written
# for this corpus: the same arguments (1, 2, 6 or 9), defaults and `eval` of the msrun
# command followed by the program string, so following it can be checked against the
# engine's convention for the script (launchers/wrapper_scripts.py).
#
#   msrun_launcher.sh "PROGRAM ARGS"                        8 workers on this machine
#   msrun_launcher.sh "PROGRAM ARGS" WORKERS                WORKERS on this machine
#   msrun_launcher.sh "PROGRAM ARGS" WORKERS PORT LOG JOIN TIMEOUT
#   msrun_launcher.sh "PROGRAM ARGS" WORKERS LOCAL ADDR PORT RANK LOG JOIN TIMEOUT

workers=8
local_workers=8
addr="127.0.0.1"
port=8118
rank=0
log="output/msrun_log"
join="False"
timeout=7200

here=$(realpath "$(dirname "$0")")
export PYTHONPATH=$here/../:$PYTHONPATH

case $# in
  1) one_node=true ;;
  2) workers=$2; local_workers=$2; one_node=true ;;
  6) workers=$2; local_workers=$2; port=$3; log=$4; join=$5; timeout=$6; one_node=true ;;
  9)
    workers=$2; local_workers=$3; addr=$4; port=$5; rank=$6; log=$7; join=$8; timeout=$9
    if [ "$workers" == "$local_workers" ]; then one_node=true; else one_node=false; fi
    ;;
  *)
    echo "usage: $0 \"PROGRAM ARGS\" [WORKERS [LOCAL ADDR] PORT [RANK] LOG JOIN TIMEOUT]"
    exit 1
    ;;
esac

if [[ ! $workers =~ ^[0-9]+$ ]]; then
  echo "worker count $workers is not a number"
  exit 1
fi

launch="msrun --worker_num=$workers --local_worker_num=$local_workers"
if [ "$one_node" == true ]; then
  launch="$launch --master_port=$port"
else
  launch="$launch --master_addr=$addr --master_port=$port --node_rank=$rank"
fi
launch="$launch --log_dir=$log --join=$join --cluster_time_out=$timeout"

command_line="$launch $1"
echo "running: $command_line"
eval $command_line

"""A stand-in for Slurm's ``srun`` on one machine: ``srun [-n N] [--ntasks-per-node M] [-N 1]
[-J NAME] PROGRAM ARGS`` starts the tasks here, each with the variables slurmstepd gives a
task (srun(1), "OUTPUT ENVIRONMENT VARIABLES"): SLURM_PROCID, SLURM_LOCALID, SLURM_NODEID,
SLURM_NTASKS, SLURM_NPROCS, SLURM_NNODES, SLURM_NTASKS_PER_NODE, SLURM_JOB_ID,
SLURM_JOB_NAME, SLURM_NODELIST. Exits with the worst task's status."""

import os
import subprocess
import sys

args = sys.argv[1:]
ntasks, per_node, nodes, name = None, None, 1, "job"
while args and args[0].startswith("-"):
    flag = args.pop(0)
    value = flag.split("=", 1)[1] if "=" in flag else None
    flag = flag.split("=", 1)[0]
    if value is None and flag in ("-n", "--ntasks", "--ntasks-per-node", "-N", "--nodes",
                                  "-J", "--job-name"):
        value = args.pop(0)
    if flag in ("-n", "--ntasks"):
        ntasks = int(value)
    elif flag == "--ntasks-per-node":
        per_node = int(value)
    elif flag in ("-N", "--nodes"):
        nodes = int(value)
    elif flag in ("-J", "--job-name"):
        name = value
if nodes != 1:
    sys.exit("srun_stub: one node only")
count = ntasks or per_node or 1
procs = []
for task in range(count):
    env = dict(os.environ)
    env.update({"SLURM_PROCID": str(task), "SLURM_LOCALID": str(task), "SLURM_NODEID": "0",
                "SLURM_NTASKS": str(count), "SLURM_NPROCS": str(count), "SLURM_NNODES": "1",
                "SLURM_JOB_ID": "4242", "SLURM_JOB_NAME": name,
                "SLURM_NODELIST": "localhost"})
    if per_node is not None:
        env["SLURM_NTASKS_PER_NODE"] = str(per_node)
    procs.append(subprocess.Popen(args, env=env))
sys.exit(max(p.wait() for p in procs))

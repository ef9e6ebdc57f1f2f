"""`#SBATCH` lines: their words, and the SLURM_* variables a batch script sees from them."""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from rankdebug.command.words import Span, Word

# sbatch's options that take no value.
SBATCH_FLAGS = frozenset({"--exclusive", "--wait", "-W", "-H", "--hold", "--requeue",
                           "--no-requeue", "--parsable", "--test-only", "--overcommit", "-O",
                           "--contiguous", "--spread-job", "--use-min-nodes", "-Q", "--quiet",
                           "-v", "--verbose", "--export-file", "--ignore-pbs"})


def sbatch_directives(script: str) -> list[Word]:
    """Words of `#SBATCH` lines, in order, with their positions."""
    words: list[Word] = []
    if "#SBATCH" not in script:
        return words
    for row, line in enumerate(script.split("\n")):
        if not line.startswith("#SBATCH"):
            continue
        rest = line[len("#SBATCH"):]
        if rest and not rest[0].isspace():
            continue
        try:
            pieces = shlex.split(rest, comments=True)
        except ValueError:
            continue
        col = len("#SBATCH")
        for piece in pieces:
            found = line.find(piece, col)
            start = found if found >= 0 else col
            col = start + len(piece)
            words.append(Word.literal(piece, Span(row, start, row, start + len(piece))))
    return words


def slurm_env(args: Sequence[Word]) -> dict[str, str]:
    """SLURM_* variables a batch script sees, from its #SBATCH options."""
    opts: dict[str, str] = {}
    values = [w.value or "" for w in args]
    i = 0
    while i < len(values):
        flag = values[i]
        val: str | None = None
        if flag.startswith("--") and "=" in flag:
            flag, val = flag.split("=", 1)
        elif i + 1 < len(values) and flag in ("-N", "-n", "-c", "--nodes", "--ntasks",
                                              "--ntasks-per-node", "--gpus-per-node",
                                              "--cpus-per-task", "--gres"):
            val = values[i + 1]
            i += 1
        elif re.fullmatch(r"-[Nnc]\d+", flag):
            flag, val = flag[:2], flag[2:]
        if val is not None:
            opts[flag] = val
        i += 1
    env: dict[str, str] = {}
    nodes = opts.get("--nodes", opts.get("-N"))
    if nodes and nodes.isdigit():
        env["SLURM_NNODES"] = env["SLURM_JOB_NUM_NODES"] = nodes
    ntasks = opts.get("--ntasks", opts.get("-n"))
    if ntasks and ntasks.isdigit():
        env["SLURM_NTASKS"] = env["SLURM_NPROCS"] = ntasks
    per_node = opts.get("--ntasks-per-node")
    if per_node and per_node.isdigit():
        env["SLURM_NTASKS_PER_NODE"] = per_node
    gpus = opts.get("--gpus-per-node")
    gres = opts.get("--gres", "")
    m = re.search(r"gpu(?::[\w-]+)?:(\d+)", gres)
    if gpus and gpus.split(":")[-1].isdigit():
        env["SLURM_GPUS_ON_NODE"] = env["SLURM_GPUS_PER_NODE"] = gpus.split(":")[-1]
    elif m:
        env["SLURM_GPUS_ON_NODE"] = m.group(1)
    cpus = opts.get("--cpus-per-task", opts.get("-c"))
    if cpus and cpus.isdigit():
        env["SLURM_CPUS_PER_TASK"] = cpus
    return env

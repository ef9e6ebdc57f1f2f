"""Slurm's host lists, and ``scontrol show hostnames`` read as a job's script reads it.

``$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)`` is node 0 (the master
address), ``... | wc -l`` the node count: known where the node list is (a caller's
environment, ``srun -w``), and the count also from ``SLURM_NNODES`` (``#SBATCH --nodes``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass


def expand_hostlist(text: str) -> list[str] | None:
    """Slurm's host list: ``a,b``, ``node[01-03,7]``, ``rack[1-2]-n[1-2]`` → the names, in
    order; None for what is not one (a file name given to -w, a bracket left open)."""
    if "/" in text:  # -w FILE: a file of names
        return None
    out: list[str] = []
    for item in _split_top(text):
        names = [""]
        rest = item
        while rest:
            head, bracket, tail = rest.partition("[")
            if not bracket:
                names = [n + rest for n in names]
                break
            inner, closed, rest = tail.partition("]")
            if not closed:
                return None
            parts = _bracket(inner)
            if parts is None:
                return None
            if len(names) * len(parts) > 100_000:  # not a host list anyone has
                return None
            names = [n + head + p for n in names for p in parts]
        out += [n for n in names if n]
    return out or None


def _split_top(text: str) -> list[str]:
    """Split at the commas outside brackets."""
    items, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "[") - (ch == "]")
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    return [*items, cur]


def _bracket(inner: str) -> list[str] | None:
    """``01-03,7`` → ["01", "02", "03", "7"] (zero padding kept)."""
    out: list[str] = []
    for part in inner.split(","):
        low, dash, high = part.partition("-")
        if not low.isdigit() or (dash and not high.isdigit()):
            return None
        if not dash:
            out.append(low)
            continue
        if int(high) - int(low) > 100_000:
            return None
        out += [str(i).zfill(len(low)) for i in range(int(low), int(high) + 1)]
    return out


# `head -n 1`, `head -1`, `head -n1`, `head --lines=1`: the first line.
_FIRST = (["-n", "1"], ["-1"], ["-n1"], ["--lines=1"], ["--lines", "1"])
_JOB_LIST = re.compile(r'"?\$\{?SLURM_(?:JOB_)?NODELIST\}?"?')


@dataclass(frozen=True)
class Stage:
    """One command of a pipeline: its name, its words (None: not known), and the text of
    its words as written."""

    name: str
    args: list[str | None]
    written: list[str]


def scontrol_hostnames(stages: list[Stage], env: Mapping[str, str | None]
                       ) -> tuple[str | None, str] | None:
    """What ``scontrol show hostnames [LIST] [| wc -l | head -n 1]`` prints, and why not
    when it cannot be known; None for any other pipeline. ``env`` holds the SLURM_*
    variables the script sees (None: set, value not known)."""
    if not stages or stages[0].name != "scontrol" or len(stages) > 2:
        return None
    first = stages[0]
    if first.args[:2] not in (["show", "hostnames"], ["show", "hostname"]) or (
            len(first.args) > 3):
        return None
    own = len(first.args) == 2 or bool(_JOB_LIST.fullmatch(first.written[2]))
    listed = first.args[2] if len(first.args) == 3 else env.get("SLURM_JOB_NODELIST")
    hosts = expand_hostlist(listed) if listed else None
    then = stages[1] if len(stages) == 2 else None
    if then is None:
        if hosts is not None:
            return "\n".join(hosts), ""
        return None, "the job's node names are known only when it runs"
    if then.name == "wc" and then.args == ["-l"]:
        if hosts is not None:
            return str(len(hosts)), ""
        nodes = env.get("SLURM_NNODES") or env.get("SLURM_JOB_NUM_NODES")
        if own and nodes is not None and nodes.isdigit():
            return nodes, ""
        return None, "the job's node count is known only when it runs (#SBATCH --nodes says it)"
    if then.name == "head" and then.args in _FIRST:
        if hosts is not None:
            return hosts[0], ""
        return None, "the job's first node is known only when it runs"
    return None

"""Stdlib-only ranks for the terminal debugger's tests: a launcher that starts N ranks with
torchrun's variables, and the rank, which loops over ``work`` until its parent goes.

    python steps.py launch 4     # the launcher (a torchrun stand-in)
    python steps.py rank         # one rank (the launcher runs it)

``work`` returns ``step * 10 + rank``, so an expression differs by rank (``p rank``) or not
(``p weight``); ranks end with their launcher (they poll ``getppid``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time


def work(step: int, rank: int) -> int:
    weight = 1.5
    total = step * 10 + rank  # BREAK
    return total + int(weight) - 1  # NEXT


def rank_main() -> int:
    rank = int(os.environ["RANK"])
    parent = os.getppid()
    step = 0
    while os.getppid() == parent:
        work(step, rank)  # CALL
        time.sleep(0.05)
        step += 1
        if os.environ.get("STEPS_END") == str(step):
            return 0
    return 0


def launch_main(nproc: int) -> int:
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(1))
    signal.signal(signal.SIGINT, lambda *_: stopping.append(1))
    base = dict(os.environ, WORLD_SIZE=str(nproc), LOCAL_WORLD_SIZE=str(nproc),
                MASTER_ADDR="127.0.0.1", MASTER_PORT="29811", OMP_NUM_THREADS="1")
    children = [subprocess.Popen([sys.executable, os.path.abspath(__file__), "rank"],
                                 env=dict(base, RANK=str(r), LOCAL_RANK=str(r), GROUP_RANK="0"),
                                 stdin=subprocess.DEVNULL) for r in range(nproc)]
    while not stopping and all(c.poll() is None for c in children):
        time.sleep(0.1)
    for c in children:
        if c.poll() is None:
            c.terminate()
    for c in children:
        c.wait()
    return max(c.returncode or 0 for c in children) if not stopping else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["rank"]:
        raise SystemExit(rank_main())
    raise SystemExit(launch_main(int(sys.argv[2]) if len(sys.argv) > 2 else 2))

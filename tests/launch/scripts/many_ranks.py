"""Many lightweight ranks (``benchmarks/scale.py``, ``tests/launch/test_many_ranks.py``): a
launcher that starts N rank processes, and the rank.

    python many_ranks.py launch --nproc 256 --per-node 8    # the launcher (a torchrun stand-in)
    python many_ranks.py rank                               # one rank (the launcher runs it)

The launcher gives every rank what torchrun gives its workers (``RANK``, ``LOCAL_RANK``,
``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``, ``GROUP_RANK``, ``ROLE_RANK``, ``MASTER_ADDR``,
``MASTER_PORT``), ``--per-node`` ranks to a node (``GROUP_RANK``), and passes SIGTERM/SIGINT on
to them; when one rank ends, it ends the others (as torchrun does). A rank imports nothing
beyond ``os``, ``sys`` and ``time`` (no torch): its main thread loops in ``rank_main →
train_step → wait_for_peers``, a sleep standing for a collective; rank ``--odd`` (default 137;
-1: none) waits in ``load_batch`` instead and holds another ``weight_sum``, so the merged stack
tree has a branch and a comparison an odd one out. Under ``rankdebug launch --arm`` the
bootstrap (``sitecustomize``) arms every rank as it would a real one.

Both end when their parent does (they poll ``getppid``), so a benchmark or a test killed with
SIGKILL leaves nothing behind.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

ODD_RANK = 137


def wait_for_peers(step: int) -> None:
    time.sleep(0.5)


def load_batch(step: int) -> None:
    time.sleep(0.5)


def train_step(step: int) -> None:
    wait_for_peers(step)


def rank_main() -> int:
    rank = int(os.environ["RANK"])
    odd = int(os.environ.get("SCALE_ODD_RANK", ODD_RANK))
    weight_sum = 1.5 if rank == odd else 1.0  # what `rankdebug eval` compares (a local: eval
    # sees the user's frames)
    parent = os.getppid()
    step = 0
    while os.getppid() == parent:
        if rank == odd:
            load_batch(step)
        else:
            train_step(step)
        step += 1
    return 0 if weight_sum else 1


def launch_main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="many_ranks.py launch")
    parser.add_argument("--nproc", type=int, default=256)
    parser.add_argument("--per-node", type=int, default=8)
    parser.add_argument("--odd", type=int, default=ODD_RANK)
    parser.add_argument("--master-port", type=int, default=29777)
    args = parser.parse_args(argv)
    parent = os.getppid()
    children: list[subprocess.Popen[bytes]] = []
    stopping = False

    def stop(signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    base = dict(os.environ, WORLD_SIZE=str(args.nproc), LOCAL_WORLD_SIZE=str(args.per_node),
                MASTER_ADDR="127.0.0.1", MASTER_PORT=str(args.master_port),
                SCALE_ODD_RANK=str(args.odd), OMP_NUM_THREADS="1")
    try:
        for rank in range(args.nproc):
            if stopping:
                break
            node, local = divmod(rank, args.per_node)
            env = dict(base, RANK=str(rank), LOCAL_RANK=str(local), GROUP_RANK=str(node),
                       ROLE_RANK=str(rank), ROLE_WORLD_SIZE=str(args.nproc))
            children.append(subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), "rank"], env=env,
                stdin=subprocess.DEVNULL))
        while not stopping and os.getppid() == parent:
            if any(c.poll() is not None for c in children):
                break
            time.sleep(0.2)
    finally:
        for c in children:
            if c.poll() is None:
                c.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 10
        for c in children:
            try:
                c.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                c.kill()
                c.wait()
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["rank"]:
        raise SystemExit(rank_main())
    if sys.argv[1:2] == ["launch"]:
        raise SystemExit(launch_main(sys.argv[2:]))
    raise SystemExit("usage: many_ranks.py launch [--nproc N] [--per-node K] | rank")

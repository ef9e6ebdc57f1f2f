"""One node's part of a many-node job of lightweight ranks (``tests/multinode/fan.py``):
starts ``--per-node`` ranks of ``tests/launch/scripts/many_ranks.py`` numbered from
``--node * --per-node``, with what torchrun gives its workers; the rendezvous
(``MASTER_ADDR:MASTER_PORT``, ``TORCHELASTIC_RUN_ID``) is the same on every node, so
``rankdebug jobs --hosts …`` joins the nodes' parts into one job.

    python node_ranks.py --node 3 --nodes 16 --per-node 64 --odd 137 --master-port 29777

Like many_ranks' launcher it passes SIGTERM/SIGINT on, ends the ranks when one ends, and
ends with its parent.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

RANK_SCRIPT = Path(__file__).resolve().parents[2] / "launch" / "scripts" / "many_ranks.py"


def main() -> int:
    parser = argparse.ArgumentParser(prog="node_ranks.py")
    parser.add_argument("--node", type=int, required=True)
    parser.add_argument("--nodes", type=int, required=True)
    parser.add_argument("--per-node", type=int, default=64)
    parser.add_argument("--odd", type=int, default=137)
    parser.add_argument("--master-port", type=int, default=29777)
    parser.add_argument("--master-addr", default="node0")
    args = parser.parse_args()
    world = args.nodes * args.per_node
    parent = os.getppid()
    stopping = False

    def stop(_signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    base = dict(os.environ, WORLD_SIZE=str(world), LOCAL_WORLD_SIZE=str(args.per_node),
                MASTER_ADDR=args.master_addr, MASTER_PORT=str(args.master_port),
                TORCHELASTIC_RUN_ID=f"fan-{args.master_port}", SCALE_ODD_RANK=str(args.odd),
                GROUP_RANK=str(args.node), ROLE_WORLD_SIZE=str(world), OMP_NUM_THREADS="1")
    children: list[subprocess.Popen[bytes]] = []
    try:
        for local in range(args.per_node):
            if stopping:
                break
            rank = args.node * args.per_node + local
            env = dict(base, RANK=str(rank), LOCAL_RANK=str(local), ROLE_RANK=str(rank))
            children.append(subprocess.Popen([sys.executable, str(RANK_SCRIPT), "rank"],
                                             env=env, stdin=subprocess.DEVNULL))
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
    sys.exit(main())

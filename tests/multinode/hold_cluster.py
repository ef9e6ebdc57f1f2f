"""The namespace cluster (cluster.py) for a process that is not pytest: the real-VS-Code
suite's multi-node scenario (tests/extension/e2e/multinode.mjs).

    python tests/multinode/hold_cluster.py

Prints one JSON line: ``{"pid": NODE0_PID, "nsenter": [...], "ssh_config": PATH,
"workdir": PATH}`` (or ``{"unavailable": WHY}`` and exits), then reads commands, a line
each: ``left`` prints a JSON list of the job's processes still on any node (rankdebug,
debugpy, torch.distributed, the test's script, ssh). End of input (or SIGTERM) ends every
process of the nodes and tears the cluster down.
"""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cluster import ClusterUnavailable, start_cluster
from test_launch_nodes import left_on


def main() -> int:
    try:
        cluster = start_cluster()
    except ClusterUnavailable as exc:
        print(json.dumps({"unavailable": str(exc)}), flush=True)
        return 0
    signal.signal(signal.SIGTERM, lambda *_: sys.stdin.close())
    try:
        node0 = cluster.nodes[0]
        print(json.dumps({"pid": node0.pid, "nsenter": node0.nsenter_argv("/")[:-2],
                          "ssh_config": str(cluster.ssh_config),
                          "workdir": str(cluster.workdir)}), flush=True)
        for line in sys.stdin:
            if line.strip() == "left":
                print(json.dumps([x for node in cluster.nodes for x in left_on(node)]),
                      flush=True)
    except (OSError, ValueError):
        pass
    finally:
        for node in cluster.nodes:
            node.kill_processes()
        cluster.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

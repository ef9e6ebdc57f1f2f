"""A Slurm cluster on top of cluster.py's two nodes: slurmctld on node 0, one slurmd per node.

Debian 12's packages (``slurmctld``, ``slurmd``, ``slurm-client``, ``munge``; Slurm 22.05)
run unchanged; what the namespaces need:

* one ``munged`` per node, all with the same key (like real hosts), each listening in the
  node's private ``/tmp``; slurm.conf points every daemon and client there
  (``AuthInfo=socket=/tmp/munge.socket``);
* slurmd 22.05 always initialises its cgroup plugin and fails ("No filesystem mounted on
  /sys/fs/cgroup") because ``ip netns exec`` gives the node a fresh sysfs, without the
  machine's cgroup mounts. Each slurmd runs in a mount namespace of its own where a tmpfs
  on /sys/fs/cgroup holds the v1 controllers mounted again (cgroup.conf:
  ``CgroupPlugin=cgroup/v1``); nothing uses them (``ProctrackType=proctrack/linuxproc``,
  ``TaskPlugin=task/none``);
* slurmd finds its ``NodeName`` from the node's hostname (``node0``, ``node1``).

Clients (``srun``, ``sinfo``) run on a node with ``SLURM_CONF`` set (``Slurm.env``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cluster import Cluster, Node

_TOOLS = ("slurmctld", "slurmd", "srun", "sinfo", "munged")

# slurmd's wrapper: the cgroup v1 controllers mounted again under a private /sys/fs/cgroup.
_SLURMD = """
set -e
mount -t tmpfs tmpfs /sys/fs/cgroup
for c in cpu cpuacct cpuset memory devices freezer; do
    mkdir /sys/fs/cgroup/$c
    mount -t cgroup -o $c cgroup /sys/fs/cgroup/$c
done
exec slurmd -D
"""


def unavailable_reason() -> str | None:
    """Why Slurm cannot be tried here (packages missing); None when it may work."""
    missing = [tool for tool in _TOOLS if shutil.which(tool) is None]
    if missing:
        return (
            f"Slurm tests need {', '.join(missing)} "
            "(apt-get install slurmctld slurmd slurm-client munge)"
        )
    return None


@dataclass
class Slurm:
    """Running Slurm daemons on a cluster's nodes."""

    cluster: Cluster
    env: dict[str, str]  #: the caller's environment plus ``SLURM_CONF``
    _daemons: list[tuple[Node, subprocess.Popen[Any]]] = field(default_factory=list)

    def close(self) -> None:
        """Kills every daemon (and whatever they started)."""
        for node, proc in reversed(self._daemons):
            node.stop(proc)
        self._daemons.clear()


def _slurm_conf(cluster: Cluster, work: Path) -> str:
    head = cluster[0]
    lines = [
        "ClusterName=rdn",
        f"SlurmctldHost={head.name}({head.address})",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        "AuthInfo=socket=/tmp/munge.socket",
        "SlurmUser=root",
        "SlurmdUser=root",
        f"StateSaveLocation={work}/state",
        f"SlurmdSpoolDir={work}/spool_%n",
        f"SlurmctldPidFile={work}/slurmctld.pid",
        f"SlurmdPidFile={work}/slurmd_%n.pid",
        f"SlurmctldLogFile={work}/slurmctld.log",
        f"SlurmdLogFile={work}/slurmd_%n.log",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_CPU",
        "MpiDefault=none",
        "ReturnToService=2",
        "SwitchType=switch/none",
        "JobCompType=jobcomp/none",
        "AccountingStorageType=accounting_storage/none",
    ]
    cpus = os.cpu_count() or 1  # each node sees the machine's CPUs
    lines += [f"NodeName={n.name} NodeAddr={n.address} CPUs={cpus}" for n in cluster.nodes]
    names = ",".join(n.name for n in cluster.nodes)
    lines.append(f"PartitionName=debug Nodes={names} Default=YES MaxTime=INFINITE State=UP")
    return "\n".join(lines) + "\n"


def start_slurm(cluster: Cluster, timeout: float = 20) -> Slurm:
    """Starts munged on every node, slurmctld on node 0, slurmd on every node, and waits
    until every node is idle. Raises RuntimeError (daemons stopped) when they do not."""
    # A folder per start: each test module that needs Slurm starts its own (the `nodes`
    # fixture ends every process of the nodes after a test, Slurm's daemons too).
    work = Path(tempfile.mkdtemp(prefix="slurm-", dir=cluster.workdir))
    (work / "state").mkdir()
    for node in cluster.nodes:
        (work / f"spool_{node.name}").mkdir()
    key = work / "munge.key"
    key.write_bytes(os.urandom(128))
    key.chmod(0o600)
    conf = work / "slurm.conf"
    conf.write_text(_slurm_conf(cluster, work))
    (work / "cgroup.conf").write_text("CgroupPlugin=cgroup/v1\nCgroupMountpoint=/sys/fs/cgroup\n")
    slurm = Slurm(cluster, {**os.environ, "SLURM_CONF": str(conf)})
    log = (work / "daemons.log").open("ab")
    quiet: dict[str, Any] = {"stdin": subprocess.DEVNULL, "stdout": log, "stderr": log}

    def daemon(node: Node, argv: list[str]) -> None:
        slurm._daemons.append((node, node.popen(argv, env=slurm.env, **quiet)))

    try:
        with log:
            for node in cluster.nodes:
                daemon(node, ["munged", "--foreground", "--force", "--socket=/tmp/munge.socket",
                              f"--key-file={key}", "--pid-file=/tmp/munged.pid",
                              f"--log-file={work}/munged_{node.name}.log",
                              "--seed-file=/tmp/munged.seed"])  # fmt: skip
            daemon(cluster[0], ["slurmctld", "-D", "-i"])
            for node in cluster.nodes:
                daemon(node, ["unshare", "--mount", "--propagation", "private",
                              "sh", "-c", _SLURMD])  # fmt: skip
        deadline = time.monotonic() + timeout
        states = ""
        while time.monotonic() < deadline:
            done = cluster[0].run(["sinfo", "-h", "-N", "-o", "%N %t"], env=slurm.env, timeout=10)
            states = done.stdout.strip()
            if done.returncode == 0 and states.count(" idle") == len(cluster.nodes):
                return slurm
            time.sleep(0.2)
        logs = "\n".join(
            f"== {path.name}\n{path.read_text(errors='replace')[-2000:]}"
            for path in sorted(work.glob("*.log"))
        )
        raise RuntimeError(f"Slurm's nodes are not idle after {timeout} s ({states!r})\n{logs}")
    except BaseException:
        slurm.close()
        raise


@contextlib.contextmanager
def running_slurm(cluster: Cluster) -> Iterator[Slurm]:
    """``with running_slurm(cluster) as slurm:`` — started, then stopped even on errors."""
    slurm = start_slurm(cluster)
    try:
        yield slurm
    finally:
        slurm.close()

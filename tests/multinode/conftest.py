"""Fixtures for the multi-node tests: a cluster of two "hosts" on this machine (cluster.py)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # cluster.py

from cluster import Cluster, ClusterUnavailable, start_cluster
from slurm import Slurm, running_slurm, unavailable_reason


@pytest.fixture(scope="session")
def cluster() -> Iterator[Cluster]:
    """Two nodes (network, PID, mount and UTS namespaces, each with a real sshd), shared by
    the session's tests and torn down at its end, failed tests or not. Skips, saying why,
    where the machine forbids namespaces (not root, tools missing, no CAP_SYS_ADMIN)."""
    try:
        started = start_cluster()
    except ClusterUnavailable as exc:
        pytest.skip(f"no multi-node cluster on this machine: {exc}")
    try:
        yield started
    finally:
        started.close()


@pytest.fixture
def nodes(cluster: Cluster) -> Iterator[Cluster]:
    """The session's cluster, with every process a test started on its nodes killed after
    the test (the nodes' sshd stay)."""
    try:
        yield cluster
    finally:
        for node in cluster.nodes:
            node.kill_processes()


@pytest.fixture(scope="module")
def slurm(cluster: Cluster) -> Iterator[Slurm]:
    """Slurm on the cluster (slurmctld on node 0, a slurmd per node), started for a test
    module's tests that use it and stopped after them; skips, saying why, where Slurm
    cannot run."""
    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    with running_slurm(cluster) as started:
        yield started

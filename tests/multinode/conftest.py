"""Fixtures for the multi-node tests: a cluster of two "hosts" on this machine (cluster.py)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # cluster.py

from cluster import Cluster, ClusterUnavailable, start_cluster


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

"""The two-node test environment is what cluster.py says: separate hosts reached over ssh."""

from __future__ import annotations

import json
import secrets
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cluster import Cluster, ClusterUnavailable, cleanup_leftovers, start_cluster

HERE = Path(__file__).resolve().parent

# Lists the command lines of the processes this /proc shows, one per line.
LIST_PROC = (
    "import os\n"
    "for p in os.listdir('/proc'):\n"
    "    if p.isdigit():\n"
    "        try: print(p, open(f'/proc/{p}/cmdline').read().replace(chr(0), ' '))\n"
    "        except OSError: pass\n"
)

# Listens on 127.0.0.1:PORT and on ADDRESS:PORT, says so, accepts until killed.
SERVE = """
import socket, sys, threading
port, address = int(sys.argv[1]), sys.argv[2]
def serve(host):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host, port)); s.listen()
    return s
servers = [serve("127.0.0.1"), serve(address)]
print("listening", flush=True)
def loop(s):
    while True:
        s.accept()[0].close()
threads = [threading.Thread(target=loop, args=(s,), daemon=True) for s in servers]
for t in threads: t.start()
threads[0].join()
"""

# Connects to each HOST:PORT of argv, prints "HOST ok" or "HOST ErrorName".
CONNECT = """
import socket, sys
for target in sys.argv[1:]:
    host, port = target.rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=3).close(); print(host, "ok")
    except OSError as exc:
        print(host, type(exc).__name__)
"""


def test_ssh_from_node0_runs_the_command_on_node1(nodes: Cluster) -> None:
    node0, node1 = nodes.nodes
    done = node0.run(
        [*nodes.ssh_argv("node1"), "hostname; echo $SSH_CONNECTION; cat /proc/1/cmdline"],
        timeout=20,
    )
    assert done.returncode == 0, done.stderr
    hostname, connection, init = done.stdout.splitlines()
    assert hostname == "node1"
    assert connection.split()[0] == node0.address  # the client is node 0
    assert connection.split()[2:] == [node1.address, "22"]
    assert "sshd" in init and "sshd_config_node1" in init  # PID 1 there is node 1's sshd
    back = node1.run([*nodes.ssh_argv(node0), "hostname"], timeout=20)
    assert (back.returncode, back.stdout) == (0, "node0\n"), back.stderr


def test_ssh_config_and_keys(cluster: Cluster) -> None:
    text = cluster.ssh_config.read_text()
    for node in cluster.nodes:
        assert f"Host {node.name}\n  HostName {node.address}" in text
    assert "StrictHostKeyChecking yes" in text and "BatchMode yes" in text
    for key in ("client_key", "host_key_node0", "host_key_node1"):
        assert (cluster.workdir / key).stat().st_mode & 0o777 == 0o600
    assert cluster.ssh_argv("node1") == ["ssh", "-F", str(cluster.ssh_config), "node1"]
    assert cluster["node1"] is cluster[1] and cluster.hosts()["node0"] == cluster[0].address


def test_node0_cannot_reach_node1_loopback_but_reaches_its_address(nodes: Cluster) -> None:
    node0, node1 = nodes.nodes
    port = 20000 + secrets.randbelow(20000)
    server = node1.popen(
        [sys.executable, "-c", SERVE, str(port), node1.address],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        assert server.stdout.readline() == "listening\n"
        targets = [f"127.0.0.1:{port}", f"{node1.address}:{port}"]
        there = node0.run([sys.executable, "-c", CONNECT, *targets], timeout=20)
        assert there.stdout.splitlines() == [
            "127.0.0.1 ConnectionRefusedError",
            f"{node1.address} ok",
        ], there.stderr
        here = node1.run([sys.executable, "-c", CONNECT, targets[0]], timeout=20)
        assert here.stdout == "127.0.0.1 ok\n", here.stderr
    finally:
        node1.stop(server)


def test_proc_on_a_node_shows_that_node_alone(nodes: Cluster) -> None:
    node0, node1 = nodes.nodes
    marker = f"{secrets.randbelow(10**6) + 10**6}.5"  # a unique `sleep` argument
    sleeper = node0.popen(["sleep", marker])
    try:
        mine = node0.run([sys.executable, "-c", LIST_PROC], timeout=20).stdout
        assert f"sleep {marker}" in mine
        assert "\n1 sshd: " in f"\n{mine}"  # PID 1 is the node's sshd
        remote = [sys.executable, "-c", LIST_PROC]
        over_ssh = node0.run([*nodes.ssh_argv(node1), shlex.join(remote)], timeout=20)
        via_nsenter = node1.run(remote, timeout=20)
        for listing in (over_ssh, via_nsenter):
            assert listing.returncode == 0, listing.stderr
            assert f"sleep {marker}" not in listing.stdout
            assert "\n1 sshd: " in f"\n{listing.stdout}"
            assert "sshd_config_node1" in listing.stdout
            assert "sshd_config_node0" not in listing.stdout
            assert "pytest" not in listing.stdout  # nor the machine's processes
        assert node0.processes()[0] == node0.pid and len(node0.processes()) >= 2
    finally:
        node0.stop(sleeper)


def test_tmp_and_dev_shm_are_private_to_each_node(nodes: Cluster) -> None:
    node0, node1 = nodes.nodes
    name = f"rdn-file-{secrets.token_hex(4)}"
    wrote = node0.run(
        [*nodes.ssh_argv(node1), f"echo one > /tmp/{name} && echo two > /dev/shm/{name}"],
        timeout=20,
    )
    assert wrote.returncode == 0, wrote.stderr
    read = f"cat /tmp/{name} /dev/shm/{name}"
    assert node1.run(["sh", "-c", read], timeout=20).stdout == "one\ntwo\n"
    assert node0.run(["sh", "-c", read], timeout=20).returncode != 0
    over_ssh = node1.run([*nodes.ssh_argv(node0), f"ls /tmp/{name}"], timeout=20)
    assert over_ssh.returncode != 0 and "No such file" in over_ssh.stderr
    assert not Path(f"/tmp/{name}").exists() and not Path(f"/dev/shm/{name}").exists()
    # The rest of the filesystem is shared, like an NFS home.
    shared = nodes.workdir / name
    node1.run(["sh", "-c", f"echo three > {shared}"], timeout=20, check=True)
    assert node0.run(["cat", str(shared)], timeout=20).stdout == "three\n"


def test_hostnames_resolve_to_node_addresses(nodes: Cluster) -> None:
    code = (
        "import socket, sys; print(socket.gethostname(), socket.getfqdn(), "
        "*(socket.gethostbyname(n) for n in sys.argv[1:]))"
    )
    for node in nodes.nodes:
        done = node.run([sys.executable, "-c", code, "node0", "node1"], timeout=20)
        expected = f"{node.name} {node.name} {nodes[0].address} {nodes[1].address}\n"
        assert done.stdout == expected, done.stderr


def test_run_timeout_kills_the_command_on_the_node(nodes: Cluster) -> None:
    node0 = nodes[0]
    start = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        node0.run(["sh", "-c", "sleep 600"], timeout=0.5)
    assert time.monotonic() - start < 5
    time.sleep(0.1)
    assert node0.processes() == [node0.pid]


def _own_cluster() -> Cluster:
    try:
        return start_cluster()
    except ClusterUnavailable as exc:
        pytest.skip(f"no multi-node cluster on this machine: {exc}")


def _netns_list() -> str:
    return subprocess.run(
        ["ip", "netns", "list"], capture_output=True, text=True, timeout=10, check=True
    ).stdout


def _alive(pid: int) -> bool:
    try:
        return "State:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


def test_teardown_leaves_nothing(cluster: Cluster) -> None:
    own = _own_cluster()  # besides the session's: parallel clusters do not collide
    assert {n.netns for n in own.nodes}.isdisjoint(n.netns for n in cluster.nodes)
    node0, node1 = own.nodes
    node1.popen(["sleep", "300"])
    detached = node0.run(
        [*own.ssh_argv(node1), "setsid nohup sleep 301 >/dev/null 2>&1 < /dev/null & echo $!"],
        timeout=20,
    )
    assert detached.returncode == 0, detached.stderr
    pids = node0.processes() + node1.processes()
    assert len(node1.processes()) >= 3  # sshd, sleep 300, sleep 301
    start = time.monotonic()
    own.close()
    took = time.monotonic() - start
    listed = _netns_list()
    assert all(node.netns not in listed for node in own.nodes)
    assert [pid for pid in pids if _alive(pid)] == []
    assert own.leftovers() == []
    assert not own.workdir.exists()
    assert took < 5
    # The session's cluster is untouched.
    assert all(node.netns in listed and _alive(node.pid) for node in cluster.nodes)


def test_a_crashed_run_is_cleaned_up_by_the_next(cluster: Cluster) -> None:
    code = (
        "import json, cluster, time\n"
        "c = cluster.start_cluster()\n"
        "print(json.dumps([c.id, [n.netns for n in c.nodes], [n.pid for n in c.nodes]]),"
        " flush=True)\n"
        "time.sleep(60)\n"
    )
    crashed = subprocess.Popen(
        [sys.executable, "-c", code], cwd=HERE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert crashed.stdout is not None
        cid, netns, pids = json.loads(crashed.stdout.readline())
    finally:
        crashed.send_signal(signal.SIGKILL)
        crashed.wait(10)
    # The nodes died with their owner (parent-death signal); the namespaces stay behind.
    deadline = time.monotonic() + 5
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in pids)
    assert all(name in _netns_list() for name in netns)
    removed = cleanup_leftovers()
    assert {f"network namespace {name}" for name in netns} <= set(removed)
    assert f"work folder /var/tmp/rdn-{cid}" in removed
    listed = _netns_list()
    assert not any(name in listed for name in netns)
    # A live cluster (the session's) is not a leftover.
    assert all(node.netns in listed and _alive(node.pid) for node in cluster.nodes)

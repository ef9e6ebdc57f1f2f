"""Two "hosts" on one Linux machine, for multi-node tests (issue 17).

Each node is a set of Linux namespaces around a real OpenSSH server:

* a **network namespace** ``rdn-<id>-<i>`` with ``lo`` up and one end of a veth pair named
  ``eth0`` (the same name on every node, so one ``GLOO_SOCKET_IFNAME=eth0`` fits all), with
  the address ``10.213.<x>.<i+1>/24``. That range exists only inside the namespaces: the
  machine itself has no route to it, and a node cannot reach another node's loopback (a
  debug port on node 1's 127.0.0.1 is out of node 0's reach, as on real hosts);
* a **PID namespace** with its own ``/proc``: ``ps`` or a ``/proc`` scan on a node sees that
  node's processes only. Its PID 1 is the node's ``sshd`` (``Node.pid`` is its PID as the
  machine sees it); killing it kills every process of the node, which is how a node ends;
* a **mount namespace** with private tmpfs on ``/tmp`` and ``/dev/shm`` and the cluster's
  own ``/etc/hosts`` bound over the machine's. Everything else (``/work``, the venv,
  ``/root``, ``/var/tmp``) is shared, like an NFS home on a cluster; so is a checkout or
  venv that lives under ``/tmp`` (bound back into the node's ``/tmp``);
* a **UTS namespace** whose hostname is the node's name (``node0``, ``node1``); the hosts
  file maps each name to its node's address, so ``socket.gethostname()`` /
  ``socket.getfqdn()`` resolve to an address the other node can reach.

The ``sshd`` of each node listens on the node's address, port 22 only, with keys the
cluster generates in its work folder (``/var/tmp/rdn-<id>``, shared by all nodes; the
machine's ``/root/.ssh`` is never read or written). ``Cluster.ssh_config`` is an OpenSSH
client configuration with ``Host node0`` / ``Host node1`` entries (strict host key checking
against the cluster's own known_hosts, batch mode). The ssh client has to run **on a node**
(``node0.run(cluster.ssh_argv("node1") + ["hostname"])``): the machine itself has no route
to the nodes.

Commands run on a node through ``nsenter`` (``Node.popen`` / ``Node.run``), in the node's
network, PID, mount and UTS namespaces, with the caller's environment and working folder.
A login over ssh lands in the same namespaces (sshd's sessions inherit them).

Unlike real hosts (worth knowing when a test passes): Unix sockets bound on the shared
filesystem (``/var/tmp``, ``/work``, ``~``) connect across nodes, only those in ``/tmp``
and abstract ones (per network namespace) are private; every node sees all the machine's
CPUs and memory; a command started over ssh outlives its ssh client (as on real hosts)
until ``Node.kill_processes`` or the cluster's end. Parallel runs must use the same
``parent`` folder: a run takes namespaces whose owner it cannot find there for leftovers.

torchrun's c10d rendezvous across the two nodes
-----------------------------------------------
What works here (torch 2.13, gloo, checked by ``test_torchrun_c10d.py``)::

    # node 0 (nsenter), and node 1 (over ssh from node 0), the same command:
    GLOO_SOCKET_IFNAME=eth0 python -m torch.distributed.run --nnodes 2 --nproc_per_node 2 \
        --rdzv_backend c10d --rdzv_endpoint <node0 address>:29500 --rdzv_id t1 script.py

The hostname matters twice in torch 2.13's c10d rendezvous:

1. The agent decides whether it hosts the rendezvous store by matching the endpoint's host
   against its own hostname and that name's addresses (``_matches_machine_hostname``).
2. The agent that becomes rendezvous rank 0 starts the workers' TCPStore on
   ``--local_addr`` or, by default, ``socket.getfqdn()``, and that name becomes every
   worker's ``MASTER_ADDR``: the other nodes must resolve it to a reachable address.

With the per-node hostname and hosts file above both hold without extra arguments. Without
them (every node named like the machine, resolving to 127.0.0.1) the job hangs until the
rendezvous times out; it then needs ``--rdzv_conf is_host=1`` on the endpoint's node and
``--local_addr <this node's address>`` on every node (both checked by hand). Gloo picks its
interface from the hostname too (the job also passes here without ``GLOO_SOCKET_IFNAME``);
``GLOO_SOCKET_IFNAME=eth0`` pins it to the veth whatever the hostname resolves to. The
workers see ``MASTER_ADDR=node0`` (the rank-0 agent's ``getfqdn()``). c10d's warning "The
hostname of the client socket cannot be retrieved. err=-3" is harmless: the store listens
on IPv6 and the reverse lookup of a v4-mapped peer (``::ffff:10.213.x.2``) finds no name.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Every namespace and work folder of a cluster starts with this prefix.
PREFIX = "rdn-"
#: The veth's name inside every node.
INTERFACE = "eth0"
#: Where clusters keep their keys and configuration: shared by the nodes (their /tmp is not).
DEFAULT_PARENT = Path("/var/tmp")
NODE_COUNT = 2
_TOOLS = ("ip", "unshare", "nsenter", "ssh", "ssh-keygen")


class ClusterUnavailable(RuntimeError):
    """The machine forbids building a cluster (the message says why); tests skip on it."""


def unavailable_reason() -> str | None:
    """Why no cluster can be built on this machine, before trying; None when it may work."""
    if os.geteuid() != 0:
        return "multi-node tests need root (network and PID namespaces)"
    missing = [tool for tool in _TOOLS if shutil.which(tool) is None]
    if missing:
        return f"multi-node tests need {', '.join(missing)} (util-linux, iproute2, openssh)"
    if _sshd() is None:
        return "multi-node tests need sshd (apt-get install openssh-server; scripts/test.sh does)"
    return None


def _sshd() -> str | None:
    """The absolute path of sshd (it re-executes itself, so it must be absolute)."""
    found = shutil.which("sshd") or shutil.which("sshd", path="/usr/sbin:/usr/local/sbin")
    return str(Path(found).resolve()) if found else None


def _cmd(argv: Sequence[str], timeout: float = 20) -> subprocess.CompletedProcess[str]:
    """Runs a short command on the machine (not on a node), output captured."""
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, check=False)


def _check(argv: Sequence[str], timeout: float = 20) -> str:
    done = _cmd(argv, timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


def _start_time(pid: int) -> str | None:
    """The start time of a process (field 22 of /proc/PID/stat): a PID plus it names one process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


def _running(pid: int) -> bool:
    """Whether a process exists and is not a zombie (one is left to its parent to reap)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _ns_id(pid: int | str, kind: str) -> str | None:
    """The namespace of one kind a process is in (``net:[4026532…]``); None once it is gone."""
    try:
        return os.readlink(f"/proc/{pid}/ns/{kind}")
    except OSError:
        return None


def _pids() -> list[int]:
    return [int(entry) for entry in os.listdir("/proc") if entry.isdigit()]


def _netns_names() -> list[str]:
    """The names ``ip netns list`` shows (each line is ``NAME`` or ``NAME (id: N)``)."""
    return [line.split()[0] for line in _check(["ip", "netns", "list"]).splitlines() if line]


def _kill_until_gone(find: Callable[[], list[int]], deadline: float) -> None:
    """SIGKILLs what ``find()`` returns, again, until it returns none or the deadline."""
    while time.monotonic() < deadline:
        pids = find()
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)


def _kill_netns_processes(netns: str, deadline: float) -> None:
    """SIGKILLs every process in a network namespace, until none is left or the deadline."""
    _kill_until_gone(
        lambda: [int(p) for p in _cmd(["ip", "netns", "pids", netns]).stdout.split()], deadline)


def _listening_on_22(pid: int) -> bool:
    """Whether something listens on TCP port 22 in the network namespace of a process."""
    try:
        lines = Path(f"/proc/{pid}/net/tcp").read_text().splitlines()[1:]
    except OSError:
        return False
    # local_address is HEX_IP:HEX_PORT; state 0A is LISTEN.
    return any(ln.split()[1].endswith(":0016") and ln.split()[3] == "0A" for ln in lines)


@dataclass
class Node:
    """One node: its names, its address and a way to run commands in its namespaces."""

    name: str  #: ``node0``, ``node1``: the ssh alias and the node's hostname
    index: int
    address: str  #: the node's address on the veth (``10.213.x.1``)
    netns: str  #: the network namespace's name (``ip netns``)
    pid: int = 0  #: the machine's PID of the node's sshd, PID 1 of its PID namespace
    pid_ns: str = ""  #: ``pid:[…]`` of the node's PID namespace
    net_ns: str = ""  #: ``net:[…]`` of the node's network namespace
    _init: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    _started: list[subprocess.Popen[Any]] = field(default_factory=list, repr=False)

    def nsenter_argv(self, cwd: str | os.PathLike[str] | None = None) -> list[str]:
        """The prefix that runs a command on this node (nsenter forks into the PID namespace).

        Entering a mount namespace resets the working folder to ``/``, hence ``--wd``.
        """
        wd = os.fspath(cwd) if cwd is not None else os.getcwd()
        return [
            "nsenter", f"--target={self.pid}", "--net", "--pid", "--mount", "--uts",
            f"--wd={wd}", "--",
        ]  # fmt: skip

    def popen(self, argv: Sequence[str], **popen_kwargs: Any) -> subprocess.Popen[Any]:
        """Starts ``argv`` on this node, like ``subprocess.Popen`` (same keyword arguments).

        It runs in a new session (unless ``start_new_session=False`` is passed), so
        ``Node.stop`` can end it together with its children; the cluster stops every
        process of the node anyway when it closes. The returned Popen is nsenter's, the
        command's parent outside the node: its exit status is the command's.
        """
        popen_kwargs.setdefault("start_new_session", True)
        proc: subprocess.Popen[Any] = subprocess.Popen(
            self.nsenter_argv(popen_kwargs.get("cwd")) + list(argv), **popen_kwargs
        )
        self._started.append(proc)
        return proc

    def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float = 60,
        check: bool = False,
        input: str | bytes | None = None,
        **popen_kwargs: Any,
    ) -> subprocess.CompletedProcess[Any]:
        """Runs ``argv`` on this node to its end, like ``subprocess.run``.

        Output is captured as text unless ``stdout``/``stderr``/``text`` say otherwise. On
        timeout the command's session is killed (not only nsenter) and
        ``subprocess.TimeoutExpired`` is raised.
        """
        popen_kwargs.setdefault("stdout", subprocess.PIPE)
        popen_kwargs.setdefault("stderr", subprocess.PIPE)
        popen_kwargs.setdefault("text", True)
        if input is not None:
            popen_kwargs.setdefault("stdin", subprocess.PIPE)
        proc = self.popen(argv, **popen_kwargs)
        try:
            out, err = proc.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            self.stop(proc)
            exc.output, exc.stderr = proc.communicate()
            raise
        done = subprocess.CompletedProcess(list(argv), proc.returncode, out, err)
        if check:
            done.check_returncode()
        return done

    def stop(self, proc: subprocess.Popen[Any], timeout: float = 10) -> None:
        """SIGKILLs a command started by ``popen`` with its session, and waits for it."""
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout)

    def processes(self) -> list[int]:
        """The machine's PIDs of the processes in this node's PID namespace (sshd first),
        zombies left out."""
        pids = [pid for pid in _pids() if _ns_id(pid, "pid") == self.pid_ns and _running(pid)]
        return sorted(pids, key=lambda pid: pid != self.pid)

    def kill_processes(self, timeout: float = 10) -> None:
        """SIGKILLs every process of the node except its sshd (a clean slate between tests).

        Commands started over ssh are children of sshd sessions, not of the ssh client, and
        outlive it; this is how a test ends them early.
        """
        deadline = time.monotonic() + timeout
        _kill_until_gone(lambda: [pid for pid in self.processes() if pid != self.pid], deadline)
        for proc in self._started:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(max(0.1, deadline - time.monotonic()))


@dataclass
class Cluster:
    """A running cluster of nodes, two unless said (see the module's docstring). Use it as a context
    manager, or call ``close``."""

    id: str  #: the random part of every name (``rdn-<id>-0``)
    workdir: Path  #: keys, configurations and node logs, on the shared filesystem
    nodes: list[Node]
    ssh_config: Path  #: an ssh client configuration with ``Host node0`` / ``Host node1``
    interface: str = INTERFACE  #: the veth's name on every node (for GLOO_SOCKET_IFNAME)

    def __getitem__(self, key: int | str) -> Node:
        """A node by index or name: ``cluster[1]``, ``cluster["node1"]``."""
        if isinstance(key, int):
            return self.nodes[key]
        for node in self.nodes:
            if node.name == key:
                return node
        raise KeyError(key)

    def ssh_argv(self, node: Node | str) -> list[str]:
        """``["ssh", "-F", CONFIG, "node1"]``: append the remote command (run it on a node)."""
        name = node.name if isinstance(node, Node) else node
        return ["ssh", "-F", str(self.ssh_config), name]

    @property
    def hub(self) -> str:
        """The network namespace of the bridge that joins more than two nodes."""
        return f"{PREFIX}{self.id}-hub"

    def hosts(self) -> dict[str, str]:
        """Each node's name and address."""
        return {node.name: node.address for node in self.nodes}

    def leftovers(self) -> list[str]:
        """What of this cluster still exists: namespaces, processes, the work folder."""
        found: list[str] = []
        names = set(_netns_names())
        found += [f"network namespace {n.netns}" for n in self.nodes if n.netns in names]
        if self.hub in names:
            found.append(f"network namespace {self.hub}")
        ours = {n.pid_ns for n in self.nodes} | {n.net_ns for n in self.nodes}
        ours.discard("")
        for pid in _pids():
            if {_ns_id(pid, "pid"), _ns_id(pid, "net")} & ours:
                found.append(f"process {pid}")
        if self.workdir.exists():
            found.append(f"work folder {self.workdir}")
        return found

    def close(self) -> None:
        """Kills every process of every node, deletes the namespaces and the work folder.

        Raises RuntimeError if something of the cluster is still there afterwards.
        """
        deadline = time.monotonic() + 20
        for node in self.nodes:
            # PID 1 of a PID namespace dying makes the kernel SIGKILL all the others.
            if node._init is not None and node._init.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    if node.pid:  # unshare reaps it, then exits
                        os.kill(node.pid, signal.SIGKILL)
                    else:  # not found yet: unshare and its child (same process group)
                        os.killpg(node._init.pid, signal.SIGKILL)
        for node in self.nodes:
            for proc in [*([node._init] if node._init else []), *node._started]:
                if proc.poll() is None:
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        proc.wait(max(0.1, deadline - time.monotonic()))
                if proc.poll() is None:  # a session whose command left the node's namespaces
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(proc.pid, signal.SIGKILL)
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        proc.wait(5)
            node._started.clear()
        for netns in [*(node.netns for node in self.nodes), self.hub]:
            if netns in _netns_names():
                # Anything that joined the network namespace without its PID namespace.
                _kill_netns_processes(netns, deadline)
                _cmd(["ip", "netns", "delete", netns])
        shutil.rmtree(self.workdir, ignore_errors=True)
        left = self.leftovers()
        while left and time.monotonic() < deadline:  # the kernel may still be reaping
            time.sleep(0.05)
            left = self.leftovers()
        if left:
            raise RuntimeError(f"cluster {self.id} left: {', '.join(left)}")

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def cleanup_leftovers(parent: Path = DEFAULT_PARENT) -> list[str]:
    """Removes what crashed runs left: namespaces ``rdn-*`` and work folders whose owner
    process is gone (a live run's, in parallel, are left alone). Returns what it removed."""
    removed: list[str] = []
    deadline = time.monotonic() + 20

    def owner_alive(cid: str) -> bool:
        try:
            owner = json.loads((parent / f"{PREFIX}{cid}" / "owner.json").read_text())
            pid, start_time = int(owner["pid"]), str(owner["start_time"])
        except (OSError, ValueError, KeyError, TypeError):
            return False
        return _start_time(pid) == start_time

    for netns in _netns_names():
        parts = netns.split("-")
        if not netns.startswith(PREFIX) or len(parts) != 3 or owner_alive(parts[1]):
            continue
        _kill_netns_processes(netns, deadline)  # the node's sshd is PID 1: all of the node
        _cmd(["ip", "netns", "delete", netns])
        removed.append(f"network namespace {netns}")
    for folder in parent.glob(f"{PREFIX}*"):
        cid = folder.name[len(PREFIX) :]
        if folder.is_dir() and (folder / "owner.json").exists() and not owner_alive(cid):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(f"work folder {folder}")
    return removed


def _keygen(path: Path, comment: str) -> str:
    """Writes an ed25519 key pair (private key mode 0600); returns the public key line."""
    _check(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)])
    path.chmod(0o600)
    return path.with_suffix(".pub").read_text().strip()


def _sshd_config(workdir: Path, node: Node) -> str:
    return "\n".join(
        [
            f"ListenAddress {node.address}",
            "Port 22",
            f"HostKey {workdir / f'host_key_{node.name}'}",
            f"PidFile {workdir / f'sshd_{node.name}.pid'}",
            f"AuthorizedKeysFile {workdir / 'authorized_keys'}",
            "PermitRootLogin prohibit-password",
            "PubkeyAuthentication yes",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "UsePAM no",
            "StrictModes no",  # the keys live in /var/tmp, not in a 0700 ~/.ssh
            "AllowTcpForwarding yes",
            "AllowStreamLocalForwarding yes",
            "StreamLocalBindUnlink yes",
            "MaxSessions 64",
            "MaxStartups 64",
            "UseDNS no",
            "PrintMotd no",
            "PrintLastLog no",
            "X11Forwarding no",
            "Subsystem sftp internal-sftp",
            "",
        ]
    )


def _ssh_config(workdir: Path, nodes: list[Node]) -> str:
    lines: list[str] = []
    for node in nodes:
        lines += [f"Host {node.name}", f"  HostName {node.address}"]
    lines += [
        "Host *",
        "  User root",
        "  Port 22",
        f"  IdentityFile {workdir / 'client_key'}",
        "  IdentitiesOnly yes",
        f"  UserKnownHostsFile {workdir / 'known_hosts'}",
        "  GlobalKnownHostsFile /dev/null",
        "  StrictHostKeyChecking yes",
        "  UpdateHostKeys no",
        "  BatchMode yes",
        "  ConnectTimeout 5",
        "  LogLevel ERROR",
        "",
    ]
    return "\n".join(lines)


# The node's PID 1 before it becomes sshd: private /tmp and /dev/shm, the cluster's hosts
# file, the node's hostname. The copies of other namespaces' /run/netns mounts are dropped
# so that this node does not keep a parallel cluster's network namespaces alive.
# $5: a folder to hold the machine's /tmp; $6…: folders under /tmp that stay shared (the
# checkout and the venv, when a clone lives in /tmp as in a CI rehearsal).
_NODE_INIT = """
set -e
umount -R -l /run/netns 2>/dev/null || true
mount --bind /tmp "$5"
mount -t tmpfs -o mode=1777 tmpfs /tmp
hosts="$1"; name="$2"; sshd="$3"; config="$4"; held="$5"; shift 5
for p in "$@"; do mkdir -p "$p"; mount --bind "$held/${p#/tmp/}" "$p"; done
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount --bind "$hosts" /etc/hosts
echo "$name" > /proc/sys/kernel/hostname
mkdir -p /run/sshd
exec "$sshd" -D -e -f "$config"
"""


def _shared_under_tmp() -> list[str]:
    """The folders under /tmp the nodes must still see: this checkout, the venv, the
    Python it runs (a CI clone in /tmp must work on every node, as a shared home would)."""
    repo = Path(__file__).resolve().parents[2]
    found = {repo, Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()}
    out = []
    for path in sorted(found):
        if path.parts[:2] == ("/", "tmp") and len(path.parts) > 2:
            out.append(str(Path("/tmp", path.parts[2])))  # its top folder under /tmp
    return sorted(set(out))


def _start_node(node: Node, workdir: Path, sshd: str, timeout: float) -> None:
    config = workdir / f"sshd_config_{node.name}"
    config.write_text(_sshd_config(workdir, node))
    held = workdir / f"machine-tmp-{node.name}"
    held.mkdir(mode=0o700, exist_ok=True)
    argv = [
        "ip", "netns", "exec", node.netns,
        # The node's PID 1 is unshare's child; unshare dies with the test process (setpriv's
        # parent-death signal) and takes the node with it (--kill-child).
        "unshare", "--pid", "--fork", "--kill-child=SIGKILL", "--mount-proc", "--mount",
        "--uts", "--propagation", "private",
        "sh", "-c", _NODE_INIT, "node-init", str(workdir / "hosts"), node.name, sshd, str(config),
        str(held), *_shared_under_tmp(),
    ]  # fmt: skip
    if shutil.which("setpriv"):
        argv = ["setpriv", "--pdeathsig", "SIGKILL", "--", *argv]
    log = (workdir / f"{node.name}.log").open("wb")
    with log:
        node._init = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True
        )
    deadline = time.monotonic() + timeout
    unshare_pid = node._init.pid  # setpriv and ip exec into unshare: the same process
    while time.monotonic() < deadline and node._init.poll() is None:
        children = Path(f"/proc/{unshare_pid}/task/{unshare_pid}/children")
        with contextlib.suppress(OSError, ValueError, IndexError):
            node.pid = node.pid or int(children.read_text().split()[0])
        if node.pid and _listening_on_22(node.pid):
            node.pid_ns = _ns_id(node.pid, "pid") or ""
            node.net_ns = _ns_id(node.pid, "net") or ""
            if node.pid_ns and node.net_ns:
                return
        time.sleep(0.02)
    text = (workdir / f"{node.name}.log").read_text(errors="replace").strip()
    if "unshare failed" in text and "Operation not permitted" in text:
        raise ClusterUnavailable(f"PID/mount/UTS namespaces are not permitted here: {text}")
    raise RuntimeError(f"{node.name}'s sshd did not start within {timeout} s: {text}")


def start_cluster(parent: Path = DEFAULT_PARENT, timeout: float = 15,
                  count: int = NODE_COUNT) -> Cluster:
    """Builds and starts a cluster of ``count`` nodes (two by default); cleans up a crashed
    run's leftovers first. More than two are joined by a bridge in a namespace of its own
    (``rdn-<id>-hub``), each node's ``eth0`` a port of it.

    Raises ClusterUnavailable where the machine forbids it (not root, tools missing,
    namespaces not permitted), RuntimeError on any other failure (after cleaning up).
    """
    reason = unavailable_reason()
    if reason:
        raise ClusterUnavailable(reason)
    sshd = _sshd()
    assert sshd is not None
    cleanup_leftovers(parent)
    cid = secrets.token_hex(3)
    subnet = ipaddress.ip_network(f"10.213.{secrets.randbelow(256)}.0/24")
    workdir = parent / f"{PREFIX}{cid}"
    workdir.mkdir(mode=0o700)
    # Written first, so that a parallel run's cleanup_leftovers knows these names are live.
    start = _start_time(os.getpid())
    (workdir / "owner.json").write_text(json.dumps({"pid": os.getpid(), "start_time": start}))
    nodes = [
        Node(name=f"node{i}", index=i, address=str(subnet[i + 1]), netns=f"{PREFIX}{cid}-{i}")
        for i in range(count)
    ]
    cluster = Cluster(id=cid, workdir=workdir, nodes=nodes, ssh_config=workdir / "ssh_config")
    try:
        for node in nodes:
            added = _cmd(["ip", "netns", "add", node.netns])
            if added.returncode != 0:
                raise ClusterUnavailable(f"ip netns add failed: {added.stderr.strip()}")
        _link(cluster)
        for node in nodes:
            ip = ["ip", "-n", node.netns]
            _check([*ip, "addr", "add", f"{node.address}/{subnet.prefixlen}", "dev", INTERFACE])
            _check([*ip, "link", "set", "lo", "up"])
            _check([*ip, "link", "set", INTERFACE, "up"])

        client = _keygen(workdir / "client_key", f"rankdebug-tests-{cid}")
        (workdir / "authorized_keys").write_text(client + "\n")
        known: list[str] = []
        for node in nodes:
            key = _keygen(workdir / f"host_key_{node.name}", node.name).split()[:2]
            known.append(f"{node.name},{node.address} {' '.join(key)}")
        (workdir / "known_hosts").write_text("\n".join(known) + "\n")
        cluster.ssh_config.write_text(_ssh_config(workdir, nodes))
        (workdir / "hosts").write_text(
            "127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n"
            + "".join(f"{node.address} {node.name}\n" for node in nodes)
        )
        for node in nodes:
            _start_node(node, workdir, sshd, timeout)
    except BaseException:
        with contextlib.suppress(Exception):
            cluster.close()
        raise
    return cluster


def _link(cluster: Cluster) -> None:
    """Two nodes: one veth pair between them; more: a veth from each to a bridge in the
    cluster's hub namespace."""
    nodes = cluster.nodes
    if len(nodes) == 2:
        link = _cmd(
            ["ip", "link", "add", "name", INTERFACE, "netns", nodes[0].netns, "type", "veth",
             "peer", "name", INTERFACE, "netns", nodes[1].netns]
        )  # fmt: skip
        if link.returncode != 0:
            raise ClusterUnavailable(f"a veth pair cannot be created: {link.stderr.strip()}")
        return
    hub = cluster.hub
    _check(["ip", "netns", "add", hub])
    _check(["ip", "-n", hub, "link", "add", "br0", "type", "bridge"])
    _check(["ip", "-n", hub, "link", "set", "br0", "up"])
    for node in nodes:
        port = f"p{node.index}"
        link = _cmd(["ip", "link", "add", "name", port, "netns", hub, "type", "veth",
                     "peer", "name", INTERFACE, "netns", node.netns])
        if link.returncode != 0:
            raise ClusterUnavailable(f"a veth pair cannot be created: {link.stderr.strip()}")
        _check(["ip", "-n", hub, "link", "set", port, "master", "br0", "up"])


@contextlib.contextmanager
def running_cluster(parent: Path = DEFAULT_PARENT, count: int = NODE_COUNT
                    ) -> Iterator[Cluster]:
    """``with running_cluster() as cluster:`` — started, then closed even on errors."""
    cluster = start_cluster(parent, count=count)
    try:
        yield cluster
    finally:
        cluster.close()

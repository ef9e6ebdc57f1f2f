"""``rankdebug launch --hosts``: a two-node torchrun job (c10d) debugged from node 0.

rankdebug launch runs on node 0 and starts node 1's part over SSH (the cluster's own sshd,
keys and config); a DAP client on node 0 attaches to the chosen ranks, one of them on node 1,
reached through the SSH connection. Node 1 has its own /proc and /tmp: what is left there,
or not, is seen from its own namespace.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from cluster import Cluster, Node

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
SCRIPT = HERE / "scripts" / "allreduce.py"
DRIVER = HERE / "scripts" / "dap_driver.py"
LINE = next(i for i, text in enumerate(SCRIPT.read_text().splitlines(), start=1)
            if "sys.stdout.write(" in text)
OURS = ("rankdebug", "torch.distributed", "allreduce", "debugpy")


def _env() -> dict[str, str]:
    return {**os.environ, "GLOO_SOCKET_IFNAME": "eth0", "OMP_NUM_THREADS": "1",
            "PYTHONPATH": str(REPO / "pyserver")}


def torchrun(port: int, run_id: str) -> list[str]:
    return [sys.executable, "-m", "torch.distributed.run", "--nnodes", "2",
            "--nproc_per_node", "2", "--rdzv_backend", "c10d",
            "--rdzv_endpoint", f"node0:{port}", "--rdzv_id", run_id, str(SCRIPT)]


def left_on(node: Node) -> list[str]:
    """Processes of ours or of the job still on ``node`` (its sshd aside)."""
    out = []
    for pid in node.processes():
        if pid == node.pid:
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if any(word in cmd for word in OURS) or "ssh" in cmd:
            out.append(f"{pid}: {cmd}")
    return out


def wait_clean(cluster: Cluster, timeout: float = 10.0) -> list[str]:
    deadline = time.monotonic() + timeout
    while True:
        left = [x for node in cluster.nodes for x in left_on(node)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.2)


def drive(cluster: Cluster, mode: str, ranks: str, port: int, *extra: str
          ) -> dict[str, Any]:
    args = ["--ranks", ranks, "--hosts", "node1", "--ssh-config", str(cluster.ssh_config),
            *extra, "--", *torchrun(port, f"t{port}")]
    got = cluster[0].run([sys.executable, str(DRIVER), mode, str(len(ranks.split(","))),
                          str(SCRIPT), str(LINE), "--", *args],
                         timeout=240, cwd=REPO, env=_env())
    assert got.returncode == 0, got.stdout + got.stderr
    result: dict[str, Any] = json.loads(got.stdout.strip().splitlines()[-1])
    result["stderr"] = got.stderr
    return result


def test_chosen_ranks_on_both_nodes_pause_continue_and_leave_nothing(nodes: Cluster) -> None:
    result = drive(nodes, "continue", "1,3", 29610)
    listening = {e["rank"]: e for e in result["events"] if e["event"] == "listening"}
    assert sorted(listening) == [1, 3], result
    # Every gate is on node 0's loopback; the rank on node 1 says which node it is on.
    assert all(e["host"] == "127.0.0.1" for e in listening.values())
    remote = [r for r, e in listening.items() if e.get("node") == "node1"]
    assert len(remote) == 1, listening
    stopped = result["stopped"]
    for rank, seen in stopped.items():
        assert seen["line"] == LINE and seen["RANK"] == f"'{rank}'", stopped
        assert seen["host"] == ("'node1'" if int(rank) in remote else "'node0'"), stopped
    job = next(e for e in result["events"] if e["event"] == "job")
    assert [n["node"] for n in job["nodes"]] == [0, 1] and job["nodes"][1]["host"] == "node1"
    assert result["code"] == 0 and result["events"][-1] == {"event": "exited", "code": 0}, \
        result["stderr"][-3000:]
    assert wait_clean(nodes) == []


def test_stop_while_paused_ends_the_job_on_every_node(nodes: Cluster) -> None:
    result = drive(nodes, "stop", "2,3", 29620)
    assert len(result["stopped"]) == 2
    assert result["code"] == 128 + signal.SIGTERM, result
    assert wait_clean(nodes) == [], result["stderr"][-2000:]
    # The job's folder on node 1 (its boot folder, the forwarded control socket) is gone.
    # (A reading verb's warm agent, jobs.node_agent, is no part of the job: it serves any
    # job of the user's there and ends after 5 idle minutes.)
    got = nodes[1].run(["sh", "-c", "ls -A /tmp/rankdebug-0 2>/dev/null || true"])
    left = [n for n in got.stdout.split() if not re.fullmatch(r"agent-[^/]*\.sock", n)]
    assert left == [], got.stdout


def test_a_node_that_dies_ends_the_job_and_is_named(nodes: Cluster) -> None:
    env = _env()
    proc = nodes[0].popen([sys.executable, "-m", "rankdebug", "launch", "--json", "--ranks", "0",
                           "--no-wait", "--hosts", "node1", "--ssh-config",
                           str(nodes.ssh_config), "--", *torchrun(29630, "t29630")],
                          cwd=REPO, env={**env, "ALLREDUCE_STEPS": "100000"},
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(0.5)
        deadline = time.monotonic() + 60
        while not any("allreduce" in x for x in left_on(nodes[1])):
            assert time.monotonic() < deadline and proc.poll() is None, "node 1 never started"
            time.sleep(0.2)
        time.sleep(2.0)
        # Node 1 dies: every process of its part of the job, and its sshd's session, at once.
        # A process may end between the listing and its kill (killing its parent ends it).
        for pid in [p for p in nodes[1].processes() if p != nodes[1].pid]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=90)
    finally:
        nodes[0].stop(proc)
    assert proc.returncode != 0
    assert "node1 (node1)" in err, err[-2000:]
    assert json.loads(out.strip().splitlines()[-1])["event"] == "exited"
    assert wait_clean(nodes) == []


def test_a_host_that_cannot_be_reached_is_an_error_naming_it(nodes: Cluster) -> None:
    got = nodes[0].run([sys.executable, "-m", "rankdebug", "launch", "--json", "--ranks", "1",
                        "--hosts", "nosuchnode", "--ssh-config", str(nodes.ssh_config),
                        "--", *torchrun(29640, "t29640")], cwd=REPO, env=_env(), timeout=60)
    assert got.returncode == 2, got.stdout + got.stderr
    error = json.loads(got.stdout)["error"]
    assert "nosuchnode" in error["message"] and "ssh" in error["message"], error
    assert "Traceback" not in got.stderr
    assert wait_clean(nodes) == []


@pytest.mark.parametrize("bad", ["-oProxyCommand=touch /tmp/x", "a b"])
def test_hosts_that_are_not_host_names_are_refused(nodes: Cluster, bad: str) -> None:
    got = nodes[0].run([sys.executable, "-m", "rankdebug", "launch", "--json", "--hosts", bad,
                        "--", *torchrun(29650, "t")], cwd=REPO, env=_env())
    assert got.returncode == 2 and "--hosts" in json.loads(got.stdout)["error"]["message"]


def test_a_job_rankdebug_did_not_start_is_one_job_across_nodes(nodes: Cluster) -> None:
    """torchrun started by hand on each node: jobs lists it once (4 ranks, 2 hosts), stacks
    reads all 4, and attach reaches a rank on node 1 from node 0."""
    env = {**_env(), "ALLREDUCE_STEPS": "100000"}
    argv = torchrun(29660, "foreign")
    remote_cmd = " ".join(["cd", str(REPO), "&&", "exec", "env", "GLOO_SOCKET_IFNAME=eth0",
                           "ALLREDUCE_STEPS=100000", "OMP_NUM_THREADS=1", *argv])
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    first = nodes[0].popen(argv, cwd=REPO, env=env, **quiet)
    second = nodes[0].popen([*nodes.ssh_argv("node1"), remote_cmd], cwd=REPO, **quiet)
    hosts = ["--hosts", "node1", "--ssh-config", str(nodes.ssh_config)]
    try:
        deadline = time.monotonic() + 90
        while True:
            got = nodes[0].run([sys.executable, "-m", "rankdebug", "jobs", "--json", "--no-gpu",
                                *hosts], cwd=REPO, env=_env())
            answer = json.loads(got.stdout)
            mine = [j for j in answer["jobs"] if j["run_id"] == "foreign"]
            if mine and len(mine[0]["ranks"]) == 4:
                break
            assert time.monotonic() < deadline, got.stdout + got.stderr
            time.sleep(1.0)
        assert len(mine) == 1, mine
        job = mine[0]
        where = {r["rank"]: r["host"] for r in job["ranks"]}
        assert sorted(where) == [0, 1, 2, 3] and set(where.values()) == {"node0", "node1"}
        assert [n["host"] for n in answer["nodes"]] == ["node0", "node1"]

        got = nodes[0].run([sys.executable, "-m", "rankdebug", "stacks", job["id"], "--json",
                            *hosts], cwd=REPO, env=_env(), timeout=120)
        report = json.loads(got.stdout)
        read = {r["rank"]: r for r in report["ranks"]}
        assert sorted(read) == [0, 1, 2, 3], got.stdout[-2000:] + got.stderr[-2000:]
        for rank in read.values():
            assert rank["error"] is None, rank
            files = [f["file"] for t in rank["threads"] for f in t["frames"]]
            assert str(SCRIPT) in files, rank
        assert {read[r]["host"] for r in read} == {"node0", "node1"}

        far = max(r for r, host in where.items() if host == "node1")
        got = nodes[0].run([sys.executable, "-m", "rankdebug", "attach", job["id"], str(far),
                            "--json", *hosts], cwd=REPO, env=_env(), timeout=150)
        event = json.loads(got.stdout.strip().splitlines()[-1])
        assert event["event"] == "listening" and event["rank"] == far, got.stdout + got.stderr
        assert event["host"] == "127.0.0.1" and event["node"] == "node1"
        # A DAP client on node 0 reaches that rank's debugger on node 1 (through the tunnel).
        probe = (
            "import sys, json; sys.path.insert(0, 'tests'); from dap_client import DAPClient\n"
            f"c = DAPClient('127.0.0.1', {int(event['port'])}, timeout=60)\n"
            "c.request('initialize', {'adapterID': 'debugpy', 'pathFormat': 'path'})\n"
            "c.send('attach', {'justMyCode': True}); c.wait_event('initialized', 60)\n"
            "c.request('configurationDone', {})\n"
            "tid = c.request('threads')['threads'][0]['id']\n"
            "c.request('pause', {'threadId': tid}); body = c.stopped(60)\n"
            "f = c.request('stackTrace', {'threadId': body['threadId']})['stackFrames']\n"
            "print(json.dumps({'RANK': c.evaluate(\"__import__('os').environ['RANK']\","
            " f[0]['id']), 'files': [x.get('source', {}).get('path') for x in f]}))\n"
            "c.disconnect()\n"
        )
        got = nodes[0].run([sys.executable, "-c", probe], cwd=REPO, env=_env(), timeout=120)
        seen = json.loads(got.stdout.strip().splitlines()[-1])
        assert seen["RANK"] == f"'{far}'" and str(SCRIPT) in seen["files"], \
            got.stdout + got.stderr
    finally:
        for proc in (first, second):
            nodes[0].stop(proc)


_PROBE = """
import json, socket, sys
out = {}
for port in json.loads(sys.argv[1]):
    s = socket.socket()
    s.settimeout(5)
    try:
        s.connect(("127.0.0.1", port))
        body = b'{"seq":1,"type":"request","command":"initialize","arguments":{}}'
        s.sendall(b"Content-Length: %d\\r\\n\\r\\n" % len(body) + body)
        data = b""
        while b'"success"' not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        out[port] = "answered" if b'"success"' in data else data.decode(errors="replace")
    except OSError as exc:
        out[port] = f"refused: {exc}"
    finally:
        s.close()
for path in sys.argv[2:]:
    u = socket.socket(socket.AF_UNIX)
    try:
        u.connect(path)
        out[path] = "connected"
    except OSError as exc:
        out[path] = f"refused: {exc}"
print(json.dumps(out))
"""


def _listening(node: Node) -> list[tuple[str, int, str]]:
    """(address, port, command line) of every TCP socket listening on ``node``."""
    got = node.run(["ss", "-ltnpH"], timeout=20)
    out = []
    for line in got.stdout.splitlines():
        parts = line.split()
        local = parts[3]
        address, _, port = local.rpartition(":")
        pids = [int(x.split("=")[1]) for x in line.replace(",", " ").split() if
                x.startswith("pid=")]
        cmd = ""
        for pid in pids:  # pids of the node's own namespace: read through its /proc
            cmd += node.run(["sh", "-c", f"tr '\\0' ' ' < /proc/{pid}/cmdline"]).stdout
        out.append((address.strip("[]"), int(port), cmd))
    return out


@pytest.mark.skipif(not os.access("/usr/bin/python3", os.X_OK), reason="no system python3")
def test_another_user_on_either_node_cannot_reach_a_rank(nodes: Cluster) -> None:
    """While ranks 1 and 3 are paused (one on each node): nothing of rankdebug's or
    debugpy's listens off loopback on either node, and a second local user on each node
    connecting to every such port, and to the job's sockets there, gets no debugger."""
    args = ["--ranks", "1,3", "--hosts", "node1", "--ssh-config", str(nodes.ssh_config), "--",
            *torchrun(29670, "t29670")]
    driver = nodes[0].popen([sys.executable, str(DRIVER), "hold", "2", str(SCRIPT), str(LINE),
                             "--", *args], cwd=REPO, env=_env(), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert driver.stdout is not None and driver.stdin is not None
        paused = json.loads(driver.stdout.readline())
        assert len(paused["paused"]) == 2, paused
        job = next(e for e in paused["events"] if e["event"] == "job")["job"]
        for node in nodes.nodes:
            ours = [(a, p) for a, p, cmd in _listening(node)
                    if "rankdebug" in cmd or "debugpy" in cmd]
            assert ours, f"{node.name}: no debugger listens at all?"
            assert all(a in ("127.0.0.1", "::1") for a, _ in ours), (node.name, ours)
            sockets = node.run(["sh", "-c", f"find /tmp /run/user -path '*{job}*' -type s "
                                            "2>/dev/null || true"]).stdout.split()
            probe = node.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                              "/usr/bin/python3", "-c", _PROBE,
                              json.dumps([p for _, p in ours]), *sockets], timeout=60)
            seen = json.loads(probe.stdout.strip().splitlines()[-1])
            assert seen and all(v not in {"answered", "connected"} for v in seen.values()), \
                (node.name, seen, probe.stderr)
        # Without --hosts, stacks reads node 0's ranks and names the one on node 1: its pid
        # is node 1's, never one to read here.
        got = nodes[0].run([sys.executable, "-m", "rankdebug", "stacks", job, "--json"],
                           cwd=REPO, env=_env(), timeout=120)
        read = {r["rank"]: r for r in json.loads(got.stdout)["ranks"]}
        far = next(int(r) for r, seen in paused["paused"].items() if seen["host"] == "'node1'")
        near = next(int(r) for r in paused["paused"] if int(r) != far)
        assert read[far]["error"] == f"rank {far} runs on node1: add --hosts node1", read
        assert read[far]["threads"] == [] and read[near]["error"] is None, read
        driver.stdin.write("\n")
        driver.stdin.flush()
        result = json.loads(driver.stdout.read().strip().splitlines()[-1])
        assert result["code"] == 0, result
    finally:
        nodes[0].stop(driver)
    assert wait_clean(nodes) == []


_PREPARE = """
import json, shutil, sys
from pathlib import Path
from rankdebug.packages import package_dir
from rankdebug.supervise.nodes.remote import RemoteNode, SshOptions
import rankdebug
# Packages at paths node 1 does not have (node 0's private /tmp): they must be copied.
here = Path("/tmp/only-on-node0")
shutil.copytree(Path(rankdebug.__file__).parent, here / "rankdebug")
shutil.copytree(package_dir("debugpy"), here / "debugpy")
(here / "job").mkdir(mode=0o700)
node = RemoteNode("node1", 1, SshOptions(sys.argv[1]), str(here / "job"))
node.connect()
try:
    node.prepare("jobx", {"rankdebug": str(here / "rankdebug"),
                          "dbg/debugpy": str(here / "debugpy")}, sys.argv[2])
    print(json.dumps({"dir": node.dir, "python": node.python}))
finally:
    node.close()
"""


def test_a_node_without_rankdebug_gets_a_copy(nodes: Cluster) -> None:
    """Where rankdebug and debugpy are not at this machine's paths on the other node, the
    boot folder there gets copies (no .pyc), owner-only."""
    bootstrap = REPO / "pyserver" / "rankdebug" / "runtime" / "bootstrap.py"
    got = nodes[0].run([sys.executable, "-c", _PREPARE, str(nodes.ssh_config), str(bootstrap)],
                       cwd=REPO, env=_env(), timeout=120)
    assert got.returncode == 0, got.stdout + got.stderr
    where = json.loads(got.stdout.strip().splitlines()[-1])["dir"]
    check = nodes[1].run(["sh", "-c", f"cd {where}/boot && stat -c '%a %F %n' . rankdebug "
                          "dbg/debugpy sitecustomize.py && ls rankdebug/runtime/debug.py "
                          "dbg/debugpy/__init__.py && find . -name '*.pyc' | wc -l"])
    nodes[1].run(["rm", "-rf", str(Path(where).parent)])  # what node_runner would remove
    lines = check.stdout.splitlines()
    assert check.returncode == 0, check.stdout + check.stderr
    assert lines[0].startswith("700 directory"), lines
    assert "directory rankdebug" in lines[1] and "directory dbg/debugpy" in lines[2], lines
    assert lines[-1].strip() == "0", lines


def test_eval_and_compare_reach_the_ranks_of_every_node(nodes: Cluster) -> None:
    """An armed job across two nodes: each rank's handler on node 1 is forwarded into the
    job's folder on node 0, so ``rankdebug eval`` there reaches all 4 ranks (no --hosts) and
    compares their values; ``attach`` of a node-1 rank by its pid here is refused."""
    env = {**_env(), "ALLREDUCE_STEPS": "100000"}
    proc = nodes[0].popen([sys.executable, "-m", "rankdebug", "launch", "--json", "--arm",
                           "--hosts", "node1", "--ssh-config", str(nodes.ssh_config), "--",
                           *torchrun(29670, "t29670")],
                          cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)
    try:
        assert proc.stdout is not None
        job = json.loads(proc.stdout.readline())["job"]
        deadline = time.monotonic() + 90
        while True:
            got = nodes[0].run([sys.executable, "-m", "rankdebug", "jobs", "--json", "--no-gpu"],
                               cwd=REPO, env=_env())
            ranks = next((j["ranks"] for j in json.loads(got.stdout)["jobs"] if j["id"] == job),
                         [])
            if len([r for r in ranks if r["socket"]]) == 4:
                break
            assert time.monotonic() < deadline and proc.poll() is None, (
                [(r["rank"], r["host"], r["state"], r["socket"]) for r in ranks], got.stdout)
            time.sleep(0.5)
        far = sorted(r["rank"] for r in ranks if r["host"] == "node1")
        assert len(far) == 2, ranks
        got = nodes[0].run([sys.executable, "-m", "rankdebug", "eval", job, "all",
                            "import os, socket; (os.environ['RANK'], socket.gethostname(), "
                            "os.environ['WORLD_SIZE'])", "--json"],
                           cwd=REPO, env=_env(), timeout=60)
        lines = [json.loads(x) for x in got.stdout.splitlines()]
        results = {e["rank"]: e["text"] for e in lines if e["event"] == "result"}
        assert sorted(results) == [0, 1, 2, 3], got.stdout + got.stderr
        for rank, text in results.items():
            host = "node1" if rank in far else "node0"
            assert text == f"('{rank}', '{host}', '4')", results
        compare = next(e for e in lines if e["event"] == "compare")
        assert len(compare["groups"]) == 4  # every rank's answer differs
        got = nodes[0].run([sys.executable, "-m", "rankdebug", "eval", job, "all",
                            "os.environ['WORLD_SIZE']", "--json"], cwd=REPO, env=_env(),
                           timeout=60)
        compare = json.loads(got.stdout.splitlines()[-1])
        assert compare["groups"] == [{"ranks": [0, 1, 2, 3], "text": "'4'"}], got.stdout

        got = nodes[0].run([sys.executable, "-m", "rankdebug", "attach", job, str(far[0]),
                            "--json"], cwd=REPO, env=_env(), timeout=60)
        assert got.returncode == 2, got.stdout + got.stderr
        message = json.loads(got.stdout)["error"]["message"]
        assert message == f"rank {far[0]} runs on node1: add --hosts node1", message
    finally:
        nodes[0].stop(proc)
    assert wait_clean(nodes, 15.0) == []
